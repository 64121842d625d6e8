// fpdeep unified loop-nest engine: one Conv/FC slice in FP, BP or WG mode (cfg_mode 0/1/2).
//
// The loop nest (grp, cob, cib, kh, kw, ho, wo) runs one iteration per cycle on TM x TN MAC
// lanes (TM output channels, TN input channels of one group), so an image takes exactly
//   G * ceil(Co/G/TM) * ceil(Ci/G/TN) * Kh * Kw * Ho * Wo + LATENCY cycles from start to done,
// the formula of fpdeep.perf.engine_cycles (G = 1 but for grouped conv, whose lanes then divide
// the group sizes, so a lane block never straddles two groups and the banks keep one layout).
// With G groups, output channel co reads only the input channels of its group co / (Co/G):
// the grp level moves the first output and input channel of a block together.
// The three modes reduce the same products differently, always by read-modify-write of a
// 48-bit result bank, so every mode may visit an accumulator in any order (BP scatters into
// the input error with stride and padding):
//   FP  Y[co,ho,wo]       += sum_n W[co,ci,kh,kw] * X[ci,hi,wi]     result lane (m, 0)
//   BP  dX[ci,hi,wi]      += sum_m W[co,ci,kh,kw] * dY[co,ho,wo]    result lane (0, n)
//   WG  dW[co,ci,kh,kw]   +=       dY[co,ho,wo]   * X[ci,hi,wi]     result lane (m, n)
// with hi = ho*sh + kh - pad_top, wi = wo*sw + kw - pad_left. Addresses, hi and wi come from
// fpdeep_loop_nest (affine, adders only); fpdeep.engine.engine_config computes every cfg_*.
//
// Double buffered: the X and dY banks and the result banks have two halves each, so that
// loading the next image, computing this one and draining the last one overlap (HALVES = 1:
// one result half, for a WG engine whose one drain ends the step).
// Protocol: stream X (C,H,W), dY (Co,Ho,Wo) in C order into s_x, s_dy (only the operands of
// the mode) and pulse start: that half is loaded; the streams go on into the other half while
// the first runs, and stall while both halves wait for or are in their runs. A run starts as
// soon as its half is loaded, the previous run is over and its result half has been drained;
// done pulses when its last accumulation has landed. Then (unless cfg_hold) its result streams
// out of m_* in C order, requantised to DW bits (or the raw 48-bit accumulator when cfg_raw, as
// WG hands sums to the SGD unit), while the next image runs; draining clears the result half.
// W (Co,Ci,Kh,Kw) and the bias (Co) are loaded once, into s_w and s_b, while nothing runs.
// With cfg_hold, runs keep accumulating into one result half over further images (WG over a
// mini-batch) until a flush pulse, taken once every started run is over, drains it. With
// cfg_bias, FP adds bias[co] << cfg_bias_shift to each output once, and WG also accumulates the
// bias gradient sum dY[co] (drained after dW). busy: a run is in the MAC pipeline.
`default_nettype none

module fpdeep_engine #(
    parameter int TM   = 2,
    parameter int TN   = 2,
    parameter int DW   = 16,
    parameter int ACCW = 48,
    parameter int CW   = 16,
    parameter int AW   = 32,
    parameter int XD   = 64,   // depth of each X bank half:  ceil(Ci/TN) * H * W
    parameter int WD   = 64,   // depth of each W bank:  ceil(Co/TM) * ceil(Ci/TN) * Kh * Kw
    parameter int YD   = 64,   // depth of each dY bank half: ceil(Co/TM) * Ho * Wo
    parameter int RD   = 64,   // depth of each result bank half: the largest of the three
    parameter int BD   = 4,    // depth of each bias / bias-gradient bank: ceil(Co/TM)
    // the one mode cfg_mode will select (0 FP, 1 BP, 2 WG), or 3 for any: with one mode,
    // only the result banks of the lanes that mode writes are built (FP m*TN, BP n < TN)
    parameter int MODE = 3,
    // result halves per lane: 2 overlap a run with the last result's drain; 1 for an engine
    // whose runs all hold (WG over a mini-batch, drained by the step's flush, after which
    // the step ends): nothing to overlap, and half the result block RAM. With 1 half a run
    // waits for the drain of the result before it.
    parameter int HALVES = 2,
    // the banks built as UltraRAM, a bit each: 1 X, 2 W, 4 dY, 8 result (the planner moves
    // those that free the most block RAM per UltraRAM block when a board's block RAM is
    // short); the others are left to the tool
    parameter int URAM = 0
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    // configuration (constant while busy)
    input  wire logic [1:0]           cfg_mode,
    input  wire logic [CW-1:0]        cfg_co,
    input  wire logic [CW-1:0]        cfg_ci,
    input  wire logic [CW-1:0]        cfg_h,
    input  wire logic [CW-1:0]        cfg_w,
    input  wire logic [7*CW-1:0]      cfg_bound,
    input  wire logic [8*AW-1:0]      cfg_init,
    input  wire logic [8*7*AW-1:0]    cfg_jump,
    input  wire logic signed [6:0]    cfg_shift,     // -32 .. 47, negative shifts left
    input  wire logic                 cfg_raw,
    input  wire logic                 cfg_hold,
    input  wire logic                 cfg_bias,
    input  wire logic [5:0]           cfg_bias_shift,
    input  wire logic [5*CW-1:0]      cfg_ld_x,    // walker {p, t2, n2, t1, n1}, n1 lowest
    input  wire logic [5*CW-1:0]      cfg_ld_w,
    input  wire logic [5*CW-1:0]      cfg_ld_dy,
    input  wire logic [5*CW-1:0]      cfg_ld_b,
    input  wire logic [5*CW-1:0]      cfg_drain,
    input  wire logic [5*CW-1:0]      cfg_drain_b,
    // operand streams
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    input  wire logic [DW-1:0]        s_w_data,
    input  wire logic                 s_w_last,
    input  wire logic                 s_w_valid,
    output logic                      s_w_ready,
    input  wire logic [DW-1:0]        s_dy_data,
    input  wire logic                 s_dy_last,
    input  wire logic                 s_dy_valid,
    output logic                      s_dy_ready,
    input  wire logic [DW-1:0]        s_b_data,
    input  wire logic                 s_b_last,
    input  wire logic                 s_b_valid,
    output logic                      s_b_ready,
    // control
    input  wire logic                 start,
    input  wire logic                 flush,
    output logic                      busy,
    output logic                      done,
    output logic                      err_frame,
    // result stream
    output logic [ACCW-1:0]           m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    localparam int NL = 7;          // grp, cob, cib, kh, kw, ho, wo
    localparam int NQ = 8;          // co0, ci0, hi, wi, x, w, dy and bias address
    localparam int Q_CO = 0, Q_CI = 1, Q_HI = 2, Q_WI = 3, Q_XA = 4, Q_WA = 5, Q_YA = 6,
                   Q_BA = 7;
    localparam int XAW = $clog2(XD), WAW = $clog2(WD), YAW = $clog2(YD), RAW = $clog2(RD);
    localparam int XAW2 = $clog2(2 * XD), YAW2 = $clog2(2 * YD);
    localparam int BAW = (BD > 1) ? $clog2(BD) : 1;
    localparam int MW = (TM > 1) ? $clog2(TM) : 1;
    localparam int NB = TM * TN;
    localparam logic [1:0] FP = 2'd0, BP = 2'd1;   // anything else is WG
    localparam int MAC_LAT = 3;      // fpdeep_mac_array LATENCY

    // Halves: in_full[h] - input half h is loaded and waits for or is in its run; res_full[h] -
    // result half h holds a finished result not yet drained. lsel: the half being loaded,
    // rsel: the half of the next (or current) run, asel: the result half runs accumulate
    // into, dsel: the result half drained next. Each pair walks its halves in turn.
    logic [1:0] in_full, res_full;
    logic       lsel, rsel, asel, dsel;
    // the result half after h: the other, or h itself with one half
    function automatic logic next_half(input logic h);
        next_half = (HALVES > 1) ? !h : 1'b0;
    endfunction
    logic       running, draining, flush_req;

    // ------------------------------------------------------------------ operand loading
    // X and dY go into the free half; W and the bias only while nothing runs or waits.
    assign s_x_ready  = !in_full[lsel];
    assign s_dy_ready = !in_full[lsel];
    assign s_w_ready  = !running && (in_full == 2'b00);
    assign s_b_ready  = !running && (in_full == 2'b00);
    wire logic x_hs = s_x_valid && s_x_ready;
    wire logic w_hs = s_w_valid && s_w_ready;
    wire logic y_hs = s_dy_valid && s_dy_ready;
    wire logic b_hs = s_b_valid && s_b_ready;

    logic [CW-1:0] xl1, wl1, wl2, yl1;
    // Waiver: walker outputs and affine addresses are CW/AW bits wide while banks need only
    // their own address width; engine_config guarantees the high bits are zero, and the X, dY
    // and bias tensors have a single channel dimension, so their second lane index is unused.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [CW-1:0] xl2, yl2, bl1, bl2;
    // A lane's bank may be deeper than CW bits address (a 224 x 224 plane over few lanes):
    // the walkers count positions in CW bits and addresses in AW, as the loop nest does.
    logic [AW-1:0] xla, wla, yla, bla;
    /* verilator lint_on UNUSEDSIGNAL */
    logic          xlast, wlast, ylast, blast;

    fpdeep_tensor_walker #(.CW(CW), .ADDR_W(AW)) u_ld_x (
        .clk, .rst, .restart(1'b0), .step(x_hs),
        .n1(cfg_ld_x[0 +: CW]), .t1(cfg_ld_x[CW +: CW]), .n2(cfg_ld_x[2*CW +: CW]),
        .t2(cfg_ld_x[3*CW +: CW]), .p(AW'(cfg_ld_x[4*CW +: CW])),
        .l1(xl1), .l2(xl2), .addr(xla), .last(xlast));
    fpdeep_tensor_walker #(.CW(CW), .ADDR_W(AW)) u_ld_w (
        .clk, .rst, .restart(1'b0), .step(w_hs),
        .n1(cfg_ld_w[0 +: CW]), .t1(cfg_ld_w[CW +: CW]), .n2(cfg_ld_w[2*CW +: CW]),
        .t2(cfg_ld_w[3*CW +: CW]), .p(AW'(cfg_ld_w[4*CW +: CW])),
        .l1(wl1), .l2(wl2), .addr(wla), .last(wlast));
    fpdeep_tensor_walker #(.CW(CW), .ADDR_W(AW)) u_ld_dy (
        .clk, .rst, .restart(1'b0), .step(y_hs),
        .n1(cfg_ld_dy[0 +: CW]), .t1(cfg_ld_dy[CW +: CW]), .n2(cfg_ld_dy[2*CW +: CW]),
        .t2(cfg_ld_dy[3*CW +: CW]), .p(AW'(cfg_ld_dy[4*CW +: CW])),
        .l1(yl1), .l2(yl2), .addr(yla), .last(ylast));

    fpdeep_tensor_walker #(.CW(CW), .ADDR_W(AW)) u_ld_b (
        .clk, .rst, .restart(1'b0), .step(b_hs),
        .n1(cfg_ld_b[0 +: CW]), .t1(cfg_ld_b[CW +: CW]), .n2(cfg_ld_b[2*CW +: CW]),
        .t2(cfg_ld_b[3*CW +: CW]), .p(AW'(cfg_ld_b[4*CW +: CW])),
        .l1(bl1), .l2(bl2), .addr(bla), .last(blast));

    // Bias bank per output lane, address cob; small, so registers.
    logic [DW-1:0] bias [TM][BD];
    always_ff @(posedge clk)
        if (b_hs) bias[bl1[MW-1:0]][bla[BAW-1:0]] <= s_b_data;

    // ------------------------------------------------------------------ loop nest (s0)
    logic            start_run;
    logic            v0;
    logic [NQ*AW-1:0] q;
    // Waiver: a run ends when the pipeline has drained (done), not on the nest's last flag;
    // of the counters only the cib/kh/kw first-visit test is needed, addresses come from the
    // affine quantities q.
    /* verilator lint_off UNUSEDSIGNAL */
    logic            last0;
    logic [NL*CW-1:0] idx;
    /* verilator lint_on UNUSEDSIGNAL */
    fpdeep_loop_nest #(.NL(NL), .NQ(NQ), .CW(CW), .AW(AW)) u_nest (
        .clk, .rst, .start(start_run), .bound(cfg_bound), .init(cfg_init), .jump(cfg_jump),
        .active(v0), .last(last0), .q(q), .idx_o(idx));

    // First visit of an output in FP (cib = kh = kw = 0): the bias goes in once. In WG the
    // same iterations see every dY[co, ho, wo] exactly once: the bias gradient's terms.
    wire logic first0 = (idx[2*CW +: CW] == '0) && (idx[3*CW +: CW] == '0) &&
                        (idx[4*CW +: CW] == '0);

    /* verilator lint_off UNUSEDSIGNAL */  // same waiver: addresses wider than the banks
    wire logic signed [AW-1:0] co0 = q[Q_CO*AW +: AW];
    wire logic signed [AW-1:0] ci0 = q[Q_CI*AW +: AW];
    wire logic signed [AW-1:0] hi  = q[Q_HI*AW +: AW];
    wire logic signed [AW-1:0] wi  = q[Q_WI*AW +: AW];
    wire logic signed [AW-1:0] xa  = q[Q_XA*AW +: AW];
    wire logic signed [AW-1:0] wa  = q[Q_WA*AW +: AW];
    wire logic signed [AW-1:0] ya  = q[Q_YA*AW +: AW];
    wire logic signed [AW-1:0] ba  = q[Q_BA*AW +: AW];
    wire logic [BAW-1:0] cob0 = ba[BAW-1:0];   // the bias bank address of the block
    /* verilator lint_on UNUSEDSIGNAL */

    // Validity of this iteration's lanes: channels past Co/Ci (ceil waste) and taps that fall
    // into the padding contribute nothing.
    logic          sp_ok0;
    logic [TM-1:0] com0;
    logic [TN-1:0] cim0;
    always_comb begin
        sp_ok0 = (hi >= 0) && (hi < $signed(AW'(cfg_h))) &&
                 (wi >= 0) && (wi < $signed(AW'(cfg_w)));
        for (int m = 0; m < TM; m++) com0[m] = (co0 + m) < $signed(AW'(cfg_co));
        for (int n = 0; n < TN; n++) cim0[n] = (ci0 + n) < $signed(AW'(cfg_ci));
    end
    wire logic [XAW-1:0] xa_rd = sp_ok0 ? xa[XAW-1:0] : '0;
    // the run reads its own half of the X and dY banks, the loaders write the other
    wire logic [XAW2-1:0] xa_run = XAW2'(xa_rd) + (rsel ? XAW2'(XD) : '0);
    wire logic [YAW2-1:0] ya_run = YAW2'(ya[YAW-1:0]) + (rsel ? YAW2'(YD) : '0);
    wire logic [XAW2-1:0] xa_ld = XAW2'(xla[XAW-1:0]) + (lsel ? XAW2'(XD) : '0);
    wire logic [YAW2-1:0] ya_ld = YAW2'(yla[YAW-1:0]) + (lsel ? YAW2'(YD) : '0);
    logic [RAW-1:0] ra0;
    always_comb begin
        case (cfg_mode)
            FP:      ra0 = ya[RAW-1:0];
            BP:      ra0 = xa[RAW-1:0];
            default: ra0 = wa[RAW-1:0];
        endcase
    end

    // ------------------------------------------------------------------ operand banks
    // each bank's ram_style (URAM's bits: X, W, dY, result)
    localparam logic [8*11-1:0] X_STYLE = URAM[0] ? 88'("ultra") : 88'("auto");
    localparam logic [8*11-1:0] W_STYLE = URAM[1] ? 88'("ultra") : 88'("auto");
    localparam logic [8*11-1:0] Y_STYLE = URAM[2] ? 88'("ultra") : 88'("auto");
    localparam logic [8*11-1:0] R_STYLE = URAM[3] ? 88'("ultra") : 88'("auto");
    // Read latency 2 (block RAM with output register): data for s0's addresses is in s2.
    logic [DW-1:0] xd [TN];
    logic [NB*DW-1:0] wd;   // lane k's weight at [k*DW +: DW]
    logic [DW-1:0] yd [TM];
    for (genvar n = 0; n < TN; n++) begin : g_x
        fpdeep_sdp_ram #(.WIDTH(DW), .DEPTH(2 * XD), .RAM_STYLE(X_STYLE), .OUT_REG(1'b1)) u_ram (
            .clk, .wr_en(x_hs && xl1 == CW'(n)), .wr_addr(xa_ld), .wr_data(s_x_data),
            .rd_en(1'b1), .rd_addr(xa_run), .rd_data(xd[n]));
    end
    for (genvar k = 0; k < NB; k++) begin : g_w
        fpdeep_sdp_ram #(.WIDTH(DW), .DEPTH(WD), .RAM_STYLE(W_STYLE), .OUT_REG(1'b1)) u_ram (
            .clk, .wr_en(w_hs && wl1 == CW'(k / TN) && wl2 == CW'(k % TN)),
            .wr_addr(wla[WAW-1:0]), .wr_data(s_w_data),
            .rd_en(1'b1), .rd_addr(wa[WAW-1:0]), .rd_data(wd[k*DW +: DW]));
    end
    for (genvar m = 0; m < TM; m++) begin : g_y
        fpdeep_sdp_ram #(.WIDTH(DW), .DEPTH(2 * YD), .RAM_STYLE(Y_STYLE), .OUT_REG(1'b1)) u_ram (
            .clk, .wr_en(y_hs && yl1 == CW'(m)), .wr_addr(ya_ld), .wr_data(s_dy_data),
            .rd_en(1'b1), .rd_addr(ya_run), .rd_data(yd[m]));
    end

    // ------------------------------------------------------------------ pipeline s1..s3
    logic          v1, v2, v3;
    logic          sp1, sp2, first1, first2;
    logic [BAW-1:0] cob1, cob2;
    logic [TM-1:0] com1, com2;
    logic [TN-1:0] cim1, cim2;
    logic [NB-1:0] we3;
    logic [RAW-1:0] ra1, ra2, ra3;
    logic [NB*DW-1:0] a3, b3;
    logic [TM*ACCW-1:0] bt3;   // FP bias terms entering the accumulation with this iteration

    // Lane (m, n) write enables and masked operands of each mode (see header), as whole
    // vectors: per-lane blocks make Yosys' elaboration quadratic in the lanes.
    //   FP: a = w where com[m] && cim[n], b = x[n] where sp && cim[n]; we: n = 0 && com[m]
    //   BP: a = w where com[m] && cim[n], b = dy[m]; we: m = 0 && cim[n] && sp
    //   WG: a = dy[m] where com[m], b = x[n] where sp && cim[n]; we: com[m] && cim[n]
    function automatic logic [NB-1:0] lanes_where(input bit first_n);
        // the lanes with n = 0 (first_n), else those with m = 0
        for (int k = 0; k < NB; k++) lanes_where[k] = first_n ? (k % TN == 0) : (k < TN);
    endfunction
    localparam logic [NB-1:0] N_FIRST = lanes_where(1'b1);
    localparam logic [NB-1:0] M_FIRST = lanes_where(1'b0);
    logic [NB-1:0]    we2;
    logic [NB*DW-1:0] a2, b2;
    logic [NB-1:0]    com_l;           // lane (m, n): com2[m]
    logic [NB*DW-1:0] com_w, y_w;      // lane (m, n): DW copies of com2[m]; dy[m]
    logic [TN*DW-1:0] cim_n, x_n;      // input lane n: DW copies of cim2[n]; x[n]
    for (genvar m = 0; m < TM; m++) begin : g_row_lanes
        assign com_l[m*TN +: TN] = {TN{com2[m]}};
        assign com_w[m*TN*DW +: TN*DW] = {(TN*DW){com2[m]}};
        assign y_w[m*TN*DW +: TN*DW] = {TN{yd[m]}};
    end
    for (genvar n = 0; n < TN; n++) begin : g_col_lanes
        assign cim_n[n*DW +: DW] = {DW{cim2[n]}};
        assign x_n[n*DW +: DW] = xd[n];
    end
    wire logic [NB-1:0]    cim_l = {TM{cim2}};
    wire logic [NB*DW-1:0] w_sel = wd & com_w & {TM{cim_n}};
    wire logic [NB*DW-1:0] x_sel = {TM{x_n & cim_n}} & {(NB*DW){sp2}};
    always_comb begin
        case (cfg_mode)
            FP: begin
                a2 = w_sel;
                b2 = x_sel;
                we2 = N_FIRST & com_l;
            end
            BP: begin
                a2 = w_sel;
                b2 = y_w;
                we2 = M_FIRST & cim_l & {NB{sp2}};
            end
            default: begin
                a2 = y_w & com_w;
                b2 = x_sel;
                we2 = com_l & cim_l;
            end
        endcase
    end

    always_ff @(posedge clk) begin
        {sp1, com1, cim1, ra1} <= {sp_ok0, com0, cim0, ra0};
        {sp2, com2, cim2, ra2} <= {sp1, com1, cim1, ra1};
        {first1, cob1} <= {first0, cob0};
        {first2, cob2} <= {first1, cob1};
        {we3, ra3, a3, b3}     <= {we2, ra2, a2, b2};
        for (int m = 0; m < TM; m++)
            bt3[m*ACCW +: ACCW] <= (cfg_mode == FP && cfg_bias && first2)
                ? ACCW'($signed(bias[m][cob2])) <<< cfg_bias_shift : '0;
        if (rst) {v1, v2, v3} <= '0;
        else     {v1, v2, v3} <= {v0, v1, v2};
    end

    // ------------------------------------------------------------------ MAC array s4..s6
    logic             v6;
    logic [NB*ACCW-1:0] sum6;
    fpdeep_mac_array #(.TM(TM), .TN(TN), .DW(DW), .ACCW(ACCW)) u_mac (
        .clk, .rst, .in_valid(v3), .reduce(cfg_mode), .a(a3), .b(b3),
        .out_valid(v6), .sum(sum6));

    logic [NB-1:0]  we_d [MAC_LAT];
    logic [RAW-1:0] ra_d [MAC_LAT];
    logic [TM*ACCW-1:0] bt_d [MAC_LAT];
    always_ff @(posedge clk) begin
        we_d[0] <= we3;
        ra_d[0] <= ra3;
        bt_d[0] <= bt3;
        for (int i = 1; i < MAC_LAT; i++) begin
            we_d[i] <= we_d[i-1];
            ra_d[i] <= ra_d[i-1];
            bt_d[i] <= bt_d[i-1];
        end
    end

    // ------------------------------------------------------------------ accumulate s7
    // Registered once more so the DSP column and the result banks need not be adjacent.
    logic               v7;
    logic [NB-1:0]      we7;
    logic [RAW-1:0]     ra7;
    logic [NB*ACCW-1:0] sum7;
    always_ff @(posedge clk) begin
        {we7, ra7} <= {we_d[MAC_LAT-1], ra_d[MAC_LAT-1]};
        // FP row sums sit in lanes (m, 0); the bias term joins them there.
        for (int k = 0; k < NB; k++)
            sum7[k*ACCW +: ACCW] <= sum6[k*ACCW +: ACCW] +
                ((k % TN == 0) ? bt_d[MAC_LAT-1][(k/TN)*ACCW +: ACCW] : '0);
        if (rst) v7 <= 1'b0;
        else     v7 <= v6;
    end

    // Bias-gradient accumulators (WG with cfg_bias): lane m, address cob; small, so registers.
    logic [ACCW-1:0] dbacc [TM][BD];
    initial begin
        for (int m = 0; m < TM; m++)
            for (int i = 0; i < BD; i++) dbacc[m][i] = '0;
    end

    // ------------------------------------------------------------------ drain walker
    /* verilator lint_off UNUSEDSIGNAL */
    logic [CW-1:0] dl1, dl2;   // waiver as for the loaders above
    logic [AW-1:0] dla;
    /* verilator lint_on UNUSEDSIGNAL */
    logic          dlast;
    // Phase 0 drains a result half, phase 1 (WG with bias) the bias-gradient banks.
    logic          dphase, d_issue, d_done;
    wire logic     drain_begin = !draining && res_full[dsel];
    wire logic [5*CW-1:0] dcfg = dphase ? cfg_drain_b : cfg_drain;
    fpdeep_tensor_walker #(.CW(CW), .ADDR_W(AW)) u_drain (
        .clk, .rst, .restart(drain_begin), .step(d_issue),
        .n1(dcfg[0 +: CW]), .t1(dcfg[CW +: CW]), .n2(dcfg[2*CW +: CW]),
        .t2(dcfg[3*CW +: CW]), .p(AW'(dcfg[4*CW +: CW])),
        .l1(dl1), .l2(dl2), .addr(dla), .last(dlast));
    wire logic has_db = (cfg_mode != FP) && (cfg_mode != BP) && cfg_bias;
    wire logic dfinal = dlast && (dphase || !has_db);

    localparam int BW = (NB > 1) ? $clog2(NB) : 1;
    logic [BW-1:0] dbank;
    always_comb begin
        case (cfg_mode)
            FP:      dbank = BW'(dl1 * TN);
            BP:      dbank = BW'(dl1);
            default: dbank = BW'(dl1 * TN + dl2);
        endcase
    end

    // ------------------------------------------------------------------ result banks
    // Two block-RAM halves per lane (fpdeep_result_lane): runs accumulate into half asel while
    // half dsel drains. Each lane gives both halves' read words; the drain picks its lane's.
    logic            out_free;
    logic [ACCW-1:0] rq0 [NB];
    logic [ACCW-1:0] rq1 [NB];
    wire logic       drain_rd = draining && !d_done && out_free && !dphase;
    for (genvar k = 0; k < NB; k++) begin : g_res
        fpdeep_result_lane #(
            .ACCW(ACCW), .RD(RD), .RAW(RAW), .HALVES(HALVES), .RAM_STYLE(R_STYLE),
            // the lanes this mode writes (FP: n = 0, BP: m = 0, WG: all)
            .BANKS(MODE >= 2 || (MODE == 0 && N_FIRST[k]) || (MODE == 1 && M_FIRST[k]))
        ) u_lane (
            .clk, .asel, .dsel, .draining, .drain_rd, .drain_here(dbank == BW'(k)),
            .dla(dla[RAW-1:0]), .rd6(v6 && we_d[MAC_LAT-1][k]), .ra6(ra_d[MAC_LAT-1]),
            .wr7(v7 && we7[k]), .ra7, .sum7(sum7[k*ACCW +: ACCW]), .q0(rq0[k]), .q1(rq1[k]));
    end

    always_ff @(posedge clk) begin
        for (int m = 0; m < TM; m++)
            if (v2 && first2 && com2[m] && has_db)
                dbacc[m][cob2] <= dbacc[m][cob2] + ACCW'($signed(yd[m]));
        if (d_issue && dphase) dbacc[dl1[MW-1:0]][dla[BAW-1:0]] <= '0;
    end

    // ------------------------------------------------------------------ drain output
    // One word in flight: issue a read when the output register is free, present it the
    // next cycle and hold it (the RAM output holds while no read is issued) until taken.
    logic            dq_valid, dq_last, dq_phase;
    logic [BW-1:0]   dq_bank;
    logic [ACCW-1:0] dq_b;
    assign out_free = !dq_valid || m_ready;
    assign d_issue  = draining && !d_done && out_free;
    always_ff @(posedge clk) begin
        if (rst) begin
            dq_valid <= 1'b0;
        end else if (out_free) begin
            dq_valid <= d_issue;
            if (d_issue) begin
                {dq_last, dq_phase, dq_bank} <= {dfinal, dphase, dbank};
                dq_b <= dbacc[dl1[MW-1:0]][dla[BAW-1:0]];
            end
        end
    end
    wire logic [ACCW-1:0] dval = dq_phase ? dq_b : dsel ? rq1[dq_bank] : rq0[dq_bank];
    logic signed [DW-1:0] dq;
    fpdeep_requant #(.IW(ACCW), .OW(DW), .SW(7)) u_rq (
        .x(dval), .shift(cfg_shift), .y(dq));

    assign m_valid = dq_valid;
    assign m_last  = dq_last;
    assign m_data  = cfg_raw ? dval : ACCW'(dq);
    wire logic d_hs = m_valid && m_ready;

    // ------------------------------------------------------------------ control
    // v4/v5 shadow the MAC array's internal stages so that done waits for every product.
    logic v4, v5;
    always_ff @(posedge clk) begin
        if (rst) {v4, v5} <= '0;
        else     {v4, v5} <= {v3, v4};
    end
    assign start_run = !running && in_full[rsel] && !res_full[asel];
    assign busy = running;
    assign done = running && !(v0 || v1 || v2 || v3 || v4 || v5 || v6 || v7);
    // a flush waits for every started run; it hands the held half to the drain
    wire logic flush_go = flush_req && !running && (in_full == 2'b00) && !res_full[asel];

    // A stream whose last flag disagrees with the configured tensor size is a framing error:
    // sticky until reset, so the host sees it in the status counters.
    always_ff @(posedge clk) begin
        if (rst) err_frame <= 1'b0;
        else if ((x_hs && s_x_last != xlast) || (w_hs && s_w_last != wlast) ||
                 (y_hs && s_dy_last != ylast) || (b_hs && s_b_last != blast))
            err_frame <= 1'b1;
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            {in_full, res_full} <= '0;
            {lsel, rsel, asel, dsel} <= '0;
            {running, draining, flush_req} <= '0;
            dphase <= 1'b0;
            d_done <= 1'b0;
        end else begin
            // runs: take the loaded half, give back the input half and the result when done
            if (start_run) running <= 1'b1;
            if (done) begin
                running <= 1'b0;
                in_full[rsel] <= 1'b0;
                rsel <= !rsel;
                if (!cfg_hold) begin
                    res_full[asel] <= 1'b1;
                    asel <= next_half(asel);
                end
            end
            if (start) begin
                in_full[lsel] <= 1'b1;
                lsel <= !lsel;
            end
            if (flush) flush_req <= 1'b1;
            if (flush_go) begin
                flush_req <= 1'b0;
                res_full[asel] <= 1'b1;
                asel <= next_half(asel);
            end
            // drains, oldest result half first
            if (drain_begin) draining <= 1'b1;
            if (draining) begin
                if (d_issue && dfinal) d_done <= 1'b1;
                else if (d_issue && dlast) dphase <= 1'b1;
                if (d_hs && m_last) begin
                    draining <= 1'b0;
                    res_full[dsel] <= 1'b0;
                    dsel <= next_half(dsel);
                    dphase <= 1'b0;
                    d_done <= 1'b0;
                end
            end
        end
    end
endmodule

`default_nettype wire
