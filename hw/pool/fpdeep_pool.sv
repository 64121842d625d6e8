// fpdeep pooling engine (docs/numerics.md §6-7): MaxPool forward with argmax, MaxPool backward
// routing, AveragePool / GlobalAveragePool forward and backward, one window tap per cycle.
//
// The loop nest (c, ho, wo, kh, kw) runs C*Ho*Wo*Kh*Kw iterations, so an image takes exactly
// that many cycles plus LATENCY = 2 (fpdeep.pool_engine.POOL_LATENCY) from start to done.
// Quantities kept by fpdeep_loop_nest: hi, wi, x address (c,hi,wi), y address (c,ho,wo) and
// the tap index k = kh*Kw + kw, the argmax's encoding (first maximum in row-major order wins).
//   MAXF (0): y[c,ho,wo] = max over taps inside the image; m_arg carries its k
//   MAXB (1): dx[c,hi,wi] += e[c,ho,wo] at the tap whose k equals the stashed argmax (s_x_arg)
//   AVGF (2): y = requant(sum of taps * M[count], shift), count = taps counted (§7)
//   AVGB (3): dx[c,hi,wi] += e[c,ho,wo] * M[count(ho,wo)] for every tap inside the image
// count(ho,wo) = rows * cols of the window clipped to [cfg_rlo, cfg_rhi) x [cfg_clo, cfg_chi)
// (the image, or image plus pads with count_include_pad; never the ceil-mode overhang).
// Protocol: while idle stream the reciprocal table M[0..] into s_m (AVG modes) and the input
// (X, or E with its argmax on s_x_arg) into s_x; pulse start; after done the result streams
// out of m_* in C order, requantised by cfg_shift. Results drain (and clear) once.
// Buffers are block-RAM shaped (synchronous reads); the result bank forwards its one hazard.
`default_nettype none

module fpdeep_pool #(
    parameter int DW   = 16,
    parameter int ACCW = 48,
    parameter int CW   = 16,
    parameter int AW   = 32,
    parameter int KB   = 8,      // tap-index / count bits: Kh*Kw < 2^KB
    parameter int MB   = 24,     // reciprocal mantissa bits: M_c < 2^(r+1), r <= 15 + KB
    parameter int XD   = 256,    // C*H*W words
    parameter int YD   = 64      // C*Ho*Wo words
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic [1:0]           cfg_mode,
    input  wire logic [5*CW-1:0]      cfg_bound,
    input  wire logic [5*AW-1:0]      cfg_init,
    input  wire logic [5*5*AW-1:0]    cfg_jump,
    input  wire logic [CW-1:0]        cfg_h,
    input  wire logic [CW-1:0]        cfg_w,
    input  wire logic [CW-1:0]        cfg_kh,
    input  wire logic [CW-1:0]        cfg_kw,
    input  wire logic signed [CW-1:0] cfg_rlo,
    input  wire logic signed [CW-1:0] cfg_rhi,
    input  wire logic signed [CW-1:0] cfg_clo,
    input  wire logic signed [CW-1:0] cfg_chi,
    input  wire logic signed [6:0]    cfg_shift,
    input  wire logic [AW-1:0]        cfg_in_count,   // words on s_x
    input  wire logic [AW-1:0]        cfg_out_count,  // words on m
    input  wire logic [MB-1:0]        s_m_data,
    input  wire logic                 s_m_valid,
    output logic                      s_m_ready,
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic [KB-1:0]        s_x_arg,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    input  wire logic                 start,
    output logic                      busy,
    output logic                      done,
    output logic                      err_frame,
    output logic [DW-1:0]             m_data,
    output logic [KB-1:0]             m_arg,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    // modes: 0 MAXF, 1 MAXB, 2 AVGF, 3 AVGB (bit 0: backward, bit 1: average)
    localparam logic [1:0] AVGF = 2'd2;
    localparam int ID = (XD > YD) ? XD : YD;
    localparam int IAW = $clog2(ID);
    localparam int RW = ACCW + MB + 1;   // sum (or error) times reciprocal, exact
    localparam int Q_HI = 0, Q_WI = 1, Q_XA = 2, Q_YA = 3, Q_K = 4;

    typedef enum logic [1:0] {IDLE, RUN, DRAIN} state_t;
    state_t state;
    wire logic bwd = cfg_mode[0];   // MAXB or AVGB
    wire logic avg = cfg_mode[1];

    // ------------------------------------------------------------------ loading
    logic [DW-1:0]  inbuf [ID];
    logic [KB-1:0]  argbuf [YD];
    logic [MB-1:0]  mtab [1 << KB];
    logic [AW-1:0]  in_ptr;
    logic [KB-1:0]  m_ptr;
    assign s_x_ready = (state == IDLE);
    assign s_m_ready = (state == IDLE);
    wire logic x_hs = s_x_valid && s_x_ready;
    wire logic in_last = (in_ptr == cfg_in_count - 1'b1);
    always_ff @(posedge clk) begin
        if (x_hs) begin
            inbuf[in_ptr[IAW-1:0]] <= s_x_data;
            if (in_ptr < YD) argbuf[in_ptr[$clog2(YD)-1:0]] <= s_x_arg;
        end
        if (s_m_valid && s_m_ready) mtab[m_ptr] <= s_m_data;
        if (rst) begin
            in_ptr <= '0;
            m_ptr <= '0;
            err_frame <= 1'b0;
        end else begin
            if (x_hs) in_ptr <= in_last ? '0 : in_ptr + 1'b1;
            if (x_hs && s_x_last != in_last) err_frame <= 1'b1;
            // the table is written from entry 0 each time start has been pulsed
            if (start && state == IDLE) m_ptr <= '0;
            else if (s_m_valid && s_m_ready) m_ptr <= m_ptr + 1'b1;
        end
    end

    // ------------------------------------------------------------------ loop nest (s0)
    logic             v0, last0;
    // Waiver: the quantities are AW wide and the buffers use their low bits; of the counters
    // only kh and kw are needed (the addresses come from the quantities).
    /* verilator lint_off UNUSEDSIGNAL */
    logic [5*AW-1:0]  q;
    logic [5*CW-1:0]  idx;
    /* verilator lint_on UNUSEDSIGNAL */
    wire logic start_run = (state == IDLE) && start;
    fpdeep_loop_nest #(.NL(5), .NQ(5), .CW(CW), .AW(AW)) u_nest (
        .clk, .rst, .start(start_run), .bound(cfg_bound), .init(cfg_init), .jump(cfg_jump),
        .active(v0), .last(last0), .q(q), .idx_o(idx));
    wire logic signed [AW-1:0] hi = q[Q_HI*AW +: AW];
    wire logic signed [AW-1:0] wi = q[Q_WI*AW +: AW];
    wire logic [IAW-1:0] xa = q[Q_XA*AW +: IAW];
    wire logic [IAW-1:0] ya = q[Q_YA*AW +: IAW];
    wire logic [KB-1:0]  k  = q[Q_K*AW +: KB];
    wire logic [CW-1:0]  kh = idx[3*CW +: CW];
    wire logic [CW-1:0]  kw = idx[4*CW +: CW];
    wire logic first0 = (kh == '0) && (kw == '0);
    wire logic lastw0 = (kh == cfg_kh - 1'b1) && (kw == cfg_kw - 1'b1);
    wire logic sp0 = (hi >= 0) && (hi < $signed(AW'(cfg_h))) &&
                     (wi >= 0) && (wi < $signed(AW'(cfg_w)));

    // Counted taps of this window: the window [hs, hs+Kh) clipped to [rlo, rhi), likewise cols.
    wire logic signed [AW-1:0] hs = hi - $signed(AW'(kh));
    wire logic signed [AW-1:0] ws = wi - $signed(AW'(kw));
    function automatic logic [KB-1:0] span(input logic signed [AW-1:0] s,
                                           input logic [CW-1:0] n,
                                           input logic signed [CW-1:0] lo,
                                           input logic signed [CW-1:0] hi_);
        logic signed [AW-1:0] a, b;
        a = (s > AW'(lo)) ? s : AW'(lo);
        b = (s + $signed(AW'(n)) < AW'(hi_)) ? s + $signed(AW'(n)) : AW'(hi_);
        span = (b > a) ? KB'(b - a) : '0;  // not `return`: Yosys 0.70 does not parse it
    endfunction
    wire logic [KB-1:0] cnt0 = KB'(span(hs, cfg_kh, cfg_rlo, cfg_rhi) *
                                   span(ws, cfg_kw, cfg_clo, cfg_chi));

    // ------------------------------------------------------------------ s1
    logic               v1, first1, lastw1, sp1;
    logic [IAW-1:0]     xa1, ya1;
    logic [KB-1:0]      k1, cnt1;
    logic [DW-1:0]      d1;      // X tap (forward) or error (backward)
    logic [KB-1:0]      a1;      // stashed argmax (MAXB)
    always_ff @(posedge clk) begin
        d1 <= inbuf[bwd ? ya : xa];
        a1 <= argbuf[ya[$clog2(YD)-1:0]];
        {first1, lastw1, sp1, xa1, ya1, k1, cnt1} <= {first0, lastw0, sp0, xa, ya, k, cnt0};
        if (rst) v1 <= 1'b0;
        else     v1 <= v0;
    end

    // running max / sum of the current window
    logic signed [ACCW-1:0] run_v;
    logic [KB-1:0]          run_k;
    logic                   run_have;
    wire logic signed [ACCW-1:0] d1x = ACCW'($signed(d1));
    wire logic take = sp1 && (first1 || !run_have || d1x > run_v);
    wire logic signed [ACCW-1:0] max_v = take ? d1x : run_v;
    wire logic [KB-1:0]          max_k = take ? k1 : run_k;
    wire logic signed [ACCW-1:0] sum_v = (first1 ? '0 : run_v) + (sp1 ? d1x : '0);
    // error times reciprocal: DW + MB + 1 bits, exact in the 48-bit accumulator
    wire logic signed [ACCW-1:0] e_m = d1x * ACCW'({1'b0, mtab[cnt1]});

    // ------------------------------------------------------------------ result bank
    // Block RAM with a synchronous read. Backward modes read the accumulator at s0 and write
    // it back at s1; a read of the address being written in the same cycle (read-first RAM)
    // takes the written value instead (forwarding). Forward modes only write, at window end.
    // While draining, the ports read a word and clear it (backward modes accumulate).
    logic              out_free, d_issue, d_done;
    logic [AW-1:0]     out_ptr;
    wire logic [IAW-1:0] oa = out_ptr[IAW-1:0];
    wire logic         out_last = (out_ptr == cfg_out_count - 1'b1);
    logic [ACCW-1:0]   rq, fwdv;
    logic              fwd;
    wire logic         acc1 = v1 && bwd && sp1 && (avg || k1 == a1);
    wire logic [ACCW-1:0] new1 = (fwd ? fwdv : rq) + (avg ? e_m : d1x);
    logic              wen;
    logic [IAW-1:0]    wadr;
    logic [ACCW-1:0]   wdat;
    always_comb begin
        if (state == DRAIN) begin
            wen = d_issue && bwd;  wadr = oa;  wdat = '0;
        end else if (bwd) begin
            wen = acc1;            wadr = xa1; wdat = new1;
        end else begin
            wen = v1 && lastw1;    wadr = ya1; wdat = avg ? sum_v : max_v;
        end
    end
    fpdeep_sdp_ram #(.WIDTH(ACCW), .DEPTH(ID), .RAM_STYLE("block"), .OUT_REG(1'b0)) u_res (
        .clk, .wr_en(wen), .wr_addr(wadr), .wr_data(wdat),
        .rd_en((state == DRAIN) ? d_issue : (v0 && bwd)),
        .rd_addr((state == DRAIN) ? oa : xa), .rd_data(rq));

    // window counts (AVGF) or argmax (MAXF) of each output, read with the result
    logic [KB-1:0] side [YD];
    logic [KB-1:0] side_q;
    always_ff @(posedge clk) begin
        fwd  <= acc1 && (xa1 == xa);
        fwdv <= new1;
        if (v1 && !bwd && lastw1) side[ya1[$clog2(YD)-1:0]] <= avg ? cnt1 : max_k;
        if (d_issue) side_q <= side[oa[$clog2(YD)-1:0]];
        if (v1 && !bwd) begin
            if (!avg) begin
                run_v <= max_v;
                run_k <= max_k;
                run_have <= first1 ? sp1 : (run_have || sp1);
            end else begin
                run_v <= sum_v;
            end
        end
    end

    // ------------------------------------------------------------------ drain output
    // One word in flight: read when the output register is free, present it next cycle.
    logic dq_valid, dq_last;
    assign out_free = !dq_valid || m_ready;
    assign d_issue  = (state == DRAIN) && !d_done && out_free;
    always_ff @(posedge clk) begin
        if (rst) dq_valid <= 1'b0;
        else if (out_free) begin
            dq_valid <= d_issue;
            if (d_issue) dq_last <= out_last;
        end
    end
    wire logic signed [RW-1:0] scaled = RW'($signed(rq)) * RW'({1'b0, mtab[side_q]});
    logic [DW-1:0] yq;
    fpdeep_requant #(.IW(RW), .OW(DW), .SW(7)) u_rq (
        .x((cfg_mode == AVGF) ? scaled : RW'($signed(rq))), .shift(cfg_shift), .y(yq));
    assign m_valid = dq_valid;
    assign m_data  = yq;
    assign m_arg   = bwd ? '0 : side_q;  // only a forward pass has an argmax
    assign m_last  = dq_last;
    wire logic d_hs = m_valid && m_ready;

    // ------------------------------------------------------------------ control
    assign busy = (state != IDLE);
    assign done = (state == RUN) && !v0 && !v1;
    always_ff @(posedge clk) begin
        if (rst) begin
            state   <= IDLE;
            out_ptr <= '0;
            d_done  <= 1'b0;
        end else begin
            case (state)
                IDLE: if (start) state <= RUN;
                RUN:  if (done) state <= DRAIN;
                default: begin
                    if (d_issue) begin
                        out_ptr <= out_last ? '0 : out_ptr + 1'b1;
                        if (out_last) d_done <= 1'b1;
                    end
                    if (d_hs && m_last) begin
                        state  <= IDLE;
                        d_done <= 1'b0;
                    end
                end
            endcase
        end
    end
    wire logic unused = last0;
endmodule

`default_nettype wire
