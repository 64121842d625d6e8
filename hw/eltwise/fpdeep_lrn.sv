// fpdeep LRN across channels (docs/numerics.md §22), forward and backward, over a (C, H, W)
// tensor streamed in C order. With n = cfg_size, lo = (n - 1) / 2, hi = n - 1 - lo:
//   forward (cfg_bwd = 0):  x in on s_x, y out on m;
//   backward (cfg_bwd = 1): the forward input x on s_x and the output's error e on s_e, dx out.
// The unit walks steps k = 0 .. C + hi - 1 (backward C + n - 2), each over the plane's cfg_plane
// positions, one position a cycle: step k takes channel k of x (zeros past the last channel)
// into a ring of the last n planes and a running sum of squares, which is then S of channel
// c1 = k - hi. Forward, channel c1's y leaves. Backward, channel c1's error comes in, its
// direct term t1 and its window term w go into rings and a running window sum, which is then A
// of channel c2 = k - n + 1, whose dx leaves. So a tensor of C channels takes (C + hi) * plane
// cycles forward and (C + n - 1) * plane backward; the output stage is one register.
// Every product and table lookup is combinational; the tables come from fpdeep_lrn_table,
// generated from the golden model's.
`default_nettype none

module fpdeep_lrn #(
    parameter int DW   = 16,
    parameter int NMAX = 5,    // the largest size (window) the unit takes: planes in its rings
    parameter int PD   = 64,   // the largest plane (H * W)
    parameter int CW   = 16,   // channel and plane counter bits
    parameter int KW   = 64,   // bits of K
    parameter int SW   = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 cfg_bwd,
    input  wire logic [CW-1:0]        cfg_channels, // C
    input  wire logic [CW-1:0]        cfg_plane,    // H * W
    input  wire logic [7:0]           cfg_size,     // n, 1 .. NMAX
    input  wire logic [KW-1:0]        cfg_k,        // K = k * 2^F, rounded (at least 1)
    input  wire logic [16:0]          cfg_ma,       // M of alpha / n
    input  wire logic signed [7:0]    cfg_dfrac,    // F = 2 fx + r of alpha / n
    input  wire logic [16:0]          cfg_mb,       // (M, r) of beta
    input  wire logic [5:0]           cfg_rb,
    input  wire logic [16:0]          cfg_mb1,      // (M, r) of beta + 1
    input  wire logic [5:0]           cfg_rb1,
    input  wire logic [16:0]          cfg_mg,       // M of 2 alpha beta / n
    input  wire logic signed [7:0]    cfg_rg,       // its r - 16
    input  wire logic [5:0]           cfg_xfrac2,   // 2 fx
    input  wire logic signed [SW-1:0] cfg_yshift,   // fx + 15 - fy
    input  wire logic signed [SW-1:0] cfg_dxshift,  // fe + 16 - fe'
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    input  wire logic [DW-1:0]        s_e_data,
    input  wire logic                 s_e_last,
    input  wire logic                 s_e_valid,
    output logic                      s_e_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    localparam int TW  = 2 * DW + $clog2(NMAX) + 1;            // S, a sum of n squares
    localparam int DDW = (KW > TW + 17 ? KW : TW + 17) + 1;   // D = K + S * M_alpha
    localparam int EW  = $clog2(DDW);
    localparam int LW  = 28;                                   // log2 d, 16 fractional bits
    localparam int UW  = LW + 18;                              // -L * M_gamma
    localparam int QW  = UW - 16;
    localparam int YW  = DW + 48;                              // x * v, room for 48 left
    localparam int VW  = 2 * DW + 18;                          // e * x * v
    localparam int GW  = 48 + 18;                              // A * M_g
    localparam int BXW = 48 + DW;                              // B * x
    localparam int DXW = DW + 66;                              // t1 - t2, room for 64 left
    localparam int RA  = $clog2(NMAX * PD);
    localparam int PA  = PD > 1 ? $clog2(PD) : 1;
    localparam logic signed [48:0] SAT48 = (49'sd1 <<< 47) - 49'sd1;

    // ---- where the unit is: step k, position p, the ring slot of channel k
    logic [CW:0]            k;
    logic [CW-1:0]          p;
    logic [7:0]             sk;
    wire logic [7:0]        lo = (cfg_size - 8'd1) >> 1;
    wire logic [7:0]        hi = cfg_size - 8'd1 - lo;
    wire logic [CW:0]       chans = {1'b0, cfg_channels};
    wire logic              k_in = k < chans;                              // x of channel k
    wire logic              c1_ok = k >= (CW+1)'(hi) && k < chans + (CW+1)'(hi);
    wire logic              c2_ok = k >= (CW+1)'(cfg_size - 8'd1);
    wire logic [CW:0]       last_k = cfg_bwd ? chans + (CW+1)'(cfg_size) - (CW+1)'(2)
                                             : chans + (CW+1)'(hi) - (CW+1)'(1);
    wire logic              produce = cfg_bwd ? c2_ok : c1_ok;
    wire logic              need_e = cfg_bwd && c1_ok;
    wire logic              end_plane = p == cfg_plane - CW'(1);
    wire logic [7:0]        sc1 = sk >= hi ? sk - hi : sk + cfg_size - hi;       // channel c1
    wire logic [7:0]        sc2 = sk + 8'd1 == cfg_size ? 8'd0 : sk + 8'd1;      // channel c2

    wire logic out_free = !m_valid || m_ready;
    wire logic ok_o = !produce || out_free;
    wire logic ok_x = !k_in || s_x_valid;
    wire logic ok_e = !need_e || s_e_valid;
    wire logic fire = ok_o && ok_x && ok_e;
    assign s_x_ready = k_in && ok_o && ok_e;
    assign s_e_ready = need_e && ok_o && ok_x;

    // ---- the rings (the last n planes) and the running sums (one plane)
    logic signed [DW-1:0] xring [NMAX*PD];
    logic        [TW-1:0] ssum  [PD];
    logic signed [47:0]   wring [NMAX*PD];
    logic signed [47:0]   tring [NMAX*PD];
    logic signed [47:0]   asum  [PD];
    wire logic [PA-1:0] a_p  = PA'(p);
    wire logic [RA-1:0] a_k  = RA'(sk) * RA'(PD) + RA'(p);
    wire logic [RA-1:0] a_c1 = RA'(sc1) * RA'(PD) + RA'(p);
    wire logic [RA-1:0] a_c2 = RA'(sc2) * RA'(PD) + RA'(p);

    // ---- S, D and log2 d of channel c1
    wire logic signed [DW-1:0] x_k = k_in ? s_x_data : '0;
    wire logic signed [DW-1:0] x_old = k < (CW+1)'(cfg_size) ? '0 : xring[a_k];    // x of k - n
    wire logic signed [DW-1:0] x_c1 = hi == 8'd0 ? x_k : xring[a_c1];
    wire logic signed [DW-1:0] x_c2 = cfg_size == 8'd1 ? x_k : xring[a_c2];
    wire logic [2*DW-1:0] sq_new = (2*DW)'(x_k) * (2*DW)'(x_k);
    wire logic [2*DW-1:0] sq_old = (2*DW)'(x_old) * (2*DW)'(x_old);
    wire logic [TW-1:0] s_c1 = (k == '0 ? '0 : ssum[a_p]) + TW'(sq_new) - TW'(sq_old);
    wire logic [DDW-1:0] d = DDW'(cfg_k) + DDW'(s_c1) * DDW'(cfg_ma);

    logic [EW-1:0]  lead;
    always_comb begin
        lead = '0;
        for (int i = 0; i < DDW; i++) if (d[i]) lead = EW'(i);
    end
    wire logic [DDW-1:0] norm = d << (EW'(DDW - 1) - lead);
    wire logic [15:0]    lfrac = norm[DDW-2 -: 16];
    logic [16:0] gint;
    fpdeep_lrn_table #(.EXP(0)) u_log2 (.f(lfrac), .v(gint));
    wire logic signed [LW-1:0] lg = ((LW'(lead) - LW'(cfg_dfrac)) <<< 16) + LW'(gint);

    // ---- d^-gamma as v * 2^(q - 15), gamma = beta (0) and beta + 1 (1)
    logic [16:0]          pm [2];
    logic [5:0]           pr [2];
    logic [16:0]          pv [2];
    logic signed [QW-1:0] pq [2];
    assign pm[0] = cfg_mb;
    assign pr[0] = cfg_rb;
    assign pm[1] = cfg_mb1;
    assign pr[1] = cfg_rb1;
    for (genvar j = 0; j < 2; j++) begin : g_pow
        wire logic signed [UW-1:0] prod = -(UW'(lg) * UW'($signed({1'b0, pm[j]})));
        wire logic signed [UW-1:0] half = prod >>> (pr[j] - 6'd1);
        wire logic signed [UW-1:0] u = (half + UW'(1)) >>> 1;
        fpdeep_lrn_table #(.EXP(1)) u_exp2 (.f(u[15:0]), .v(pv[j]));
        assign pq[j] = QW'(u >>> 16);
    end

    // ---- forward: y = requant(x * v_beta, fx + 15 - q_beta - fy), the shift at least -48
    wire logic signed [QW+1:0] ys_full = (QW+2)'(cfg_yshift) - (QW+2)'(pq[0]);
    wire logic signed [SW-1:0] ys = ys_full < -((QW+2)'(48)) ? -(SW'(48))
                                  : ys_full > (QW+2)'(63) ? SW'(63) : SW'(ys_full);
    wire logic signed [YW-1:0] xv = YW'(x_c1) * YW'($signed({1'b0, pv[0]}));
    logic signed [DW-1:0] y;
    fpdeep_requant #(.IW(YW), .OW(DW), .SW(SW)) u_y (.x(xv), .shift(ys), .y(y));

    // ---- backward: t1 and w of channel c1 by sat48 (rshift saturated to 48 bits; a
    // saturating left shift for shifts below 1, at most 47 places)
    wire logic signed [DW-1:0] e_c1 = need_e ? s_e_data : '0;
    logic signed [VW-1:0] s48_v [2];
    logic signed [QW+1:0] s48_s [2];
    logic signed [47:0]   s48_r [2];
    assign s48_v[0] = VW'(e_c1) * VW'($signed({1'b0, pv[0]}));
    assign s48_s[0] = -((QW+2)'(1)) - (QW+2)'(pq[0]);
    assign s48_v[1] = VW'(e_c1) * VW'(x_c1) * VW'($signed({1'b0, pv[1]}));
    assign s48_s[1] = (QW+2)'(15) - (QW+2)'(pq[1]);
    for (genvar j = 0; j < 2; j++) begin : g_sat48
        wire logic [5:0] rs = s48_s[j] > (QW+2)'(63) ? 6'd63 : s48_s[j][5:0];
        wire logic [5:0] ls = s48_s[j] < -((QW+2)'(47)) ? 6'd47 : 6'(-s48_s[j]);
        wire logic signed [VW:0] half = (VW+1)'(s48_v[j]) >>> (rs - 6'd1);
        wire logic signed [VW:0] rr = (half + (VW+1)'(1)) >>> 1;
        wire logic signed [48:0] limit = SAT48 >>> ls;
        wire logic signed [VW:0] vw = (VW+1)'(s48_v[j]);
        wire logic signed [48:0] clipped = vw > (VW+1)'(limit) ? limit
                                         : vw < -((VW+1)'(limit)) - (VW+1)'(1) ? -limit - 49'sd1
                                         : 49'(vw);
        wire logic signed [48:0] left = clipped <<< ls;
        wire logic signed [48:0] right = rr > (VW+1)'(SAT48) ? SAT48
                                       : rr < -((VW+1)'(SAT48)) - (VW+1)'(1) ? -SAT48 - 49'sd1
                                       : 49'(rr);
        assign s48_r[j] = s48_s[j] > 0 ? right[47:0] : left[47:0];
        wire logic unused = &{1'b0, left[48], right[48]};  // within 48 bits by construction
    end
    wire logic signed [47:0] t1 = s48_r[0];
    wire logic signed [47:0] w = c1_ok ? s48_r[1] : '0;
    // w of channel c1 - n leaves the window sum
    wire logic signed [47:0] w_old = k < (CW+1)'(cfg_size) + (CW+1)'(hi) ? '0 : wring[a_c1];
    wire logic signed [47:0] a_c2sum = (k == '0 ? '0 : asum[a_p]) + w - w_old;
    wire logic signed [47:0] t1_c2 = lo == 8'd0 ? t1 : tring[a_c2];
    // B = wrap48(rshift(A * M_g, r_g - 16)), t2 = rshift(B * x, 2 fx)
    wire logic signed [GW-1:0] ag = GW'(a_c2sum) * GW'($signed({1'b0, cfg_mg}));
    wire logic signed [GW-1:0] ag_half = ag >>> (cfg_rg - 8'sd1);
    wire logic signed [GW-1:0] ag_right = (ag_half + GW'(1)) >>> 1;
    wire logic signed [GW-1:0] ag_left = ag <<< (-cfg_rg);
    wire logic signed [47:0]   bq = cfg_rg > 8'sd0 ? ag_right[47:0] : ag_left[47:0];
    wire logic signed [BXW-1:0] bx = BXW'(bq) * BXW'(x_c2);
    wire logic signed [BXW-1:0] bx_half = bx >>> (cfg_xfrac2 - 6'd1);
    wire logic signed [BXW-1:0] t2 = cfg_xfrac2 == 6'd0 ? bx : (bx_half + BXW'(1)) >>> 1;
    wire logic signed [DXW-1:0] diff = DXW'(t1_c2) - DXW'(t2);
    logic signed [DW-1:0] dx;
    fpdeep_requant #(.IW(DXW), .OW(DW), .SW(SW)) u_dx (.x(diff), .shift(cfg_dxshift), .y(dx));

    // ---- state
    always_ff @(posedge clk) begin
        if (rst) begin
            k <= '0;
            p <= '0;
            sk <= '0;
        end else if (fire) begin
            if (end_plane) begin
                p <= '0;
                if (k == last_k) begin
                    k <= '0;
                    sk <= '0;
                end else begin
                    k <= k + (CW+1)'(1);
                    sk <= sk + 8'd1 == cfg_size ? 8'd0 : sk + 8'd1;
                end
            end else begin
                p <= p + CW'(1);
            end
        end
    end

    always_ff @(posedge clk) begin
        if (fire) begin
            xring[a_k] <= x_k;
            ssum[a_p] <= s_c1;
            if (cfg_bwd) begin
                wring[a_c1] <= w;
                tring[a_c1] <= t1;
                asum[a_p] <= a_c2sum;
            end
        end
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= fire && produce;
            if (fire && produce) begin
                m_data <= cfg_bwd ? dx : y;
                m_last <= k == last_k && end_plane;
            end
        end
    end

    wire logic unused = &{1'b0, s_x_last, s_e_last, norm[DDW-1], norm[DDW-18:0], ag_right[GW-1:48],
                             ag_left[GW-1:48]};
endmodule

`default_nettype wire
