// fpdeep loss-gradient unit (docs/numerics.md §10): the per-sample error at the logits.
//   cfg_kind 0, softmax cross-entropy: e_j = sat(p_j - onehot_j << fe) with the fixed-point
//     softmax of §10.1 (max subtraction, d*log2(e), 2^f by a 257-entry table with linear
//     interpolation, exact rounded division p_j = floor((x_j 2^(fe+1) + S) / (2S)))
//   cfg_kind 1, MSE: e_j = requant((z_j - onehot_j << fz) * cfg_mse_m, cfg_mse_shift)
// The 2^(i/256) table is loaded once through s_t (257 words, from the golden model's table),
// the logits of one sample arrive on s_z with the label as sideband, the errors leave on m.
// The division is a restoring divider, one quotient bit per cycle (DIVW cycles per class):
// the loss layer is tiny next to the conv engines, so it trades time for area.
`default_nettype none

module fpdeep_loss #(
    parameter int DW   = 16,
    parameter int NMAX = 16,     // classes
    parameter int LW   = 8,      // label bits
    parameter int DIVW = 48      // divider width
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 cfg_kind,
    input  wire logic [LW-1:0]        cfg_n,
    input  wire logic signed [6:0]    cfg_ushift,     // z.frac + 15 - 16
    input  wire logic [5:0]           cfg_fe,         // error fractional bits
    input  wire logic [5:0]           cfg_fz,         // logit fractional bits
    input  wire logic [16:0]          cfg_mse_m,
    input  wire logic signed [6:0]    cfg_mse_shift,
    input  wire logic [16:0]          s_t_data,
    input  wire logic                 s_t_valid,
    output logic                      s_t_ready,
    input  wire logic [DW-1:0]        s_z_data,
    input  wire logic [LW-1:0]        s_z_label,
    input  wire logic                 s_z_last,
    input  wire logic                 s_z_valid,
    output logic                      s_z_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    localparam int NW = (NMAX > 1) ? $clog2(NMAX) : 1;
    typedef enum logic [2:0] {LOAD, EXP, DIV, EMIT, MSE} state_t;
    state_t state;

    logic [16:0]          etab [257];
    logic [8:0]           t_ptr;
    logic signed [DW-1:0] zbuf [NMAX];
    logic [16:0]          xbuf [NMAX];
    logic signed [DW-1:0] zmax;
    logic [LW-1:0]        label, j;
    logic [DIVW-1:0]      s_sum;

    assign s_t_ready = 1'b1;
    always_ff @(posedge clk) begin
        if (rst) t_ptr <= '0;
        else if (s_t_valid) begin
            etab[t_ptr] <= s_t_data;
            t_ptr <= (t_ptr == 9'd256) ? '0 : t_ptr + 1'b1;
        end
    end

    // ------------------------------------------------------------------ exp(z_j - max)
    wire logic signed [DW:0]    d    = (DW+1)'(zbuf[j[NW-1:0]]) - (DW+1)'(zmax);
    wire logic signed [39:0]    prod = 40'(d) * 40'sd47274;
    logic signed [39:0]         u;
    fpdeep_requant #(.IW(40), .OW(40), .SW(7)) u_u (.x(prod), .shift(cfg_ushift), .y(u));
    wire logic signed [39:0]    nk   = -(u >>> 16);           // -k >= 0
    wire logic [7:0]            hi   = u[15:8];
    wire logic [7:0]            lo   = u[7:0];
    wire logic [16:0]           e0   = etab[{1'b0, hi}];
    wire logic [16:0]           e1   = etab[{1'b0, hi} + 9'd1];
    wire logic [25:0]           dl   = 26'(e1 - e0) * 26'(lo);  // e1 >= e0: the table rises
    wire logic [17:0]           dlr  = 18'(((dl >> 7) + 26'd1) >> 1);
    wire logic [17:0]           v    = 18'(e0) + dlr;
    logic [17:0] xj;
    always_comb begin
        if (nk == 0)       xj = v;
        else if (nk >= 18) xj = '0;        // v < 2^18: any larger shift rounds to 0
        else               xj = ((v >> (nk[4:0] - 5'd1)) + 18'd1) >> 1;
    end

    // ------------------------------------------------------------------ divider
    logic [DIVW-1:0] num, den, rem, quo;
    logic [$clog2(DIVW+1)-1:0] bitn;
    wire logic [DIVW:0] rem_sh = {rem, num[bitn - 1'b1]};

    // ------------------------------------------------------------------ outputs
    wire logic is_lab = (j == label);
    wire logic signed [DIVW:0] e_ce = (DIVW+1)'(quo) -
                                      (is_lab ? (DIVW+1)'(1) << cfg_fe : '0);
    localparam logic signed [DIVW:0] HI = (DIVW+1)'((1 << (DW - 1)) - 1);
    localparam logic signed [DIVW:0] LO = -(DIVW+1)'(1 << (DW - 1));
    wire logic signed [40:0] diff = 41'(zbuf[j[NW-1:0]]) - (is_lab ? 41'(1) << cfg_fz : '0);
    wire logic signed [59:0] mprod = 60'(diff) * 60'($signed({1'b0, cfg_mse_m}));
    logic [DW-1:0] e_mse;
    fpdeep_requant #(.IW(60), .OW(DW), .SW(7)) u_mse (.x(mprod), .shift(cfg_mse_shift),
                                                       .y(e_mse));

    assign s_z_ready = (state == LOAD);
    assign m_last = (j == cfg_n - 1'b1);
    always_comb begin
        m_valid = (state == EMIT) || (state == MSE);
        if (state == MSE)       m_data = e_mse;
        else if (e_ce > HI)     m_data = HI[DW-1:0];
        else if (e_ce < LO)     m_data = LO[DW-1:0];
        else                    m_data = e_ce[DW-1:0];
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            state <= LOAD;
            j <= '0;
        end else begin
            case (state)
                LOAD: if (s_z_valid) begin
                    zbuf[j[NW-1:0]] <= s_z_data;
                    if (j == '0 || $signed(s_z_data) > zmax) zmax <= s_z_data;
                    label <= s_z_label;
                    j <= s_z_last ? '0 : j + 1'b1;
                    if (s_z_last) begin
                        state <= cfg_kind ? MSE : EXP;
                        s_sum <= '0;
                    end
                end
                EXP: begin
                    xbuf[j[NW-1:0]] <= xj[16:0];
                    s_sum <= s_sum + DIVW'(xj);
                    j <= (j == cfg_n - 1'b1) ? '0 : j + 1'b1;
                    if (j == cfg_n - 1'b1) state <= DIV;
                    bitn <= '0;
                end
                DIV: begin
                    if (bitn == '0) begin
                        // numerator x_j 2^(fe+1) + S, denominator 2S
                        num  <= (DIVW'(xbuf[j[NW-1:0]]) << (cfg_fe + 6'd1)) + s_sum;
                        den  <= s_sum << 1;
                        rem  <= '0;
                        quo  <= '0;
                        bitn <= DIVW[$clog2(DIVW+1)-1:0];
                    end else begin
                        if (rem_sh >= (DIVW+1)'(den)) begin
                            rem <= DIVW'(rem_sh - (DIVW+1)'(den));
                            quo <= {quo[DIVW-2:0], 1'b1};
                        end else begin
                            rem <= DIVW'(rem_sh);
                            quo <= {quo[DIVW-2:0], 1'b0};
                        end
                        bitn <= bitn - 1'b1;
                        if (bitn == 1) state <= EMIT;
                    end
                end
                EMIT: if (m_ready) begin
                    j <= m_last ? '0 : j + 1'b1;
                    state <= m_last ? LOAD : DIV;
                end
                default: if (m_ready) begin  // MSE
                    j <= m_last ? '0 : j + 1'b1;
                    if (m_last) state <= LOAD;
                end
            endcase
        end
    end
endmodule

`default_nettype wire
