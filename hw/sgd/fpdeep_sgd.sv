// fpdeep SGD update (docs/numerics.md §11-12). Joins the weight-gradient accumulator stream
// (48-bit, as the WG engine drains it after a mini-batch) with the weight stream and emits
// the updated weight:
//   g  = requant(acc * cfg_mb, cfg_sb)                      batch mean, gradient format
//   w' = saturate(w - rshift(g * cfg_mlr, cfg_slr))         the rounded step is not saturated
// cfg_mb / cfg_mlr are the 17-bit unsigned mantissas of 1/B and of the learning rate, cfg_sb =
// f_acc + r_B - f_g and cfg_slr = f_g + r_lr - f_w. One registered output stage.
`default_nettype none

module fpdeep_sgd #(
    parameter int DW   = 16,
    parameter int ACCW = 48,
    parameter int MW   = 17,
    parameter int SW   = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic [MW-1:0]        cfg_mb,
    input  wire logic signed [SW-1:0] cfg_sb,
    input  wire logic [MW-1:0]        cfg_mlr,
    input  wire logic signed [SW-1:0] cfg_slr,
    input  wire logic [ACCW-1:0]      s_g_data,
    input  wire logic                 s_g_last,   // ignored: s_w frames the tensor
    input  wire logic                 s_g_valid,
    output logic                      s_g_ready,
    input  wire logic [DW-1:0]        s_w_data,
    input  wire logic                 s_w_last,
    input  wire logic                 s_w_valid,
    output logic                      s_w_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    // acc * M_B is exact in ACCW + MW + 1 bits (signed times unsigned); the step needs
    // DW + MW + 1 bits plus room for a left shift of up to 2^(SW-1) - 1.
    localparam int PW = ACCW + MW + 1 + (1 << (SW - 1));
    localparam int QW = DW + MW + 1 + (1 << (SW - 1));

    wire logic out_free = !m_valid || m_ready;
    wire logic fire = out_free && s_g_valid && s_w_valid;
    assign s_g_ready = out_free && s_w_valid;
    assign s_w_ready = out_free && s_g_valid;

    wire logic signed [PW-1:0] prod = PW'($signed(s_g_data)) * PW'($signed({1'b0, cfg_mb}));
    logic signed [DW-1:0] g;
    fpdeep_requant #(.IW(PW), .OW(DW), .SW(SW)) u_mean (.x(prod), .shift(cfg_sb), .y(g));

    wire logic signed [QW-1:0] gl = QW'(g) * QW'($signed({1'b0, cfg_mlr}));
    logic signed [QW-1:0] step;
    fpdeep_requant #(.IW(QW), .OW(QW), .SW(SW)) u_step (.x(gl), .shift(cfg_slr), .y(step));

    wire logic signed [QW:0] wn = (QW+1)'($signed(s_w_data)) - (QW+1)'(step);
    localparam logic signed [QW:0] HI = (QW+1)'((1 << (DW - 1)) - 1);
    localparam logic signed [QW:0] LO = -(QW+1)'(1 << (DW - 1));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= s_g_valid && s_w_valid;
            if (fire) begin
                m_data <= (wn > HI) ? HI[DW-1:0] : (wn < LO) ? LO[DW-1:0] : wn[DW-1:0];
                m_last <= s_w_last;
            end
        end
    end

    wire logic unused = s_g_last;
endmodule

`default_nettype wire
