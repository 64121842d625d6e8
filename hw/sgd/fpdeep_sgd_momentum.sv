// fpdeep SGD update with momentum and weight decay (docs/numerics.md §11, §17). Joins the
// weight-gradient accumulator stream (48-bit), the weight stream and the velocity stream and
// emits the updated weight and velocity:
//   g  = requant(acc * cfg_mb, cfg_sb)                      batch mean, gradient format
//   d  = requant(g, cfg_sgv -> vel) + rshift(w * cfg_mwd, cfg_swd)
//   v' = saturate(rshift(v * cfg_mmu, cfg_smu) + d, vel)
//   w' = saturate(w - rshift(v' * cfg_mlr, cfg_slr), weight)
// cfg_m* are the 17-bit unsigned mantissas of 1/B, the weight decay, the momentum and the
// learning rate; cfg_mwd = 0 turns decay off and cfg_mmu = 0 momentum off (a rounding shift
// of 0 is 0), so one unit serves every setting. The velocity starts at 0, which is the
// first step's v' = d. The shifts are cfg_sgv = f_g - f_v, cfg_swd = f_w + r_wd - f_v,
// cfg_smu = r_mu and cfg_slr = f_v + r_lr - f_w. One registered output stage; both outputs
// are taken before the next element is.
`default_nettype none

module fpdeep_sgd_momentum #(
    parameter int DW   = 16,
    parameter int ACCW = 48,
    parameter int VW   = 24,
    parameter int MW   = 17,
    parameter int SW   = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic [MW-1:0]        cfg_mb,
    input  wire logic signed [SW-1:0] cfg_sb,
    input  wire logic signed [SW-1:0] cfg_sgv,
    input  wire logic [MW-1:0]        cfg_mwd,
    input  wire logic signed [SW-1:0] cfg_swd,
    input  wire logic [MW-1:0]        cfg_mmu,
    input  wire logic signed [SW-1:0] cfg_smu,
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
    input  wire logic [VW-1:0]        s_v_data,
    input  wire logic                 s_v_last,   // ignored: s_w frames the tensor
    input  wire logic                 s_v_valid,
    output logic                      s_v_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready,
    output logic [VW-1:0]             m_v_data,
    output logic                      m_v_last,
    output logic                      m_v_valid,
    input  wire logic                 m_v_ready
);
    // Room for a left shift of up to 2^(SW-1) - 1 on top of each exact product.
    localparam int LS = 1 << (SW - 1);
    localparam int PW = ACCW + MW + 1 + LS;   // acc * M_B
    localparam int GW = VW + LS;              // g moved to the velocity's fraction
    localparam int DWW = DW + MW + 1 + LS;    // w * M_wd
    localparam int VMW = VW + MW + 1 + LS;    // v * M_mu and v' * M_lr
    localparam int SUMW = VMW + 2;

    // both outputs free: the next element may enter
    wire logic out_free = (!m_valid || m_ready) && (!m_v_valid || m_v_ready);
    wire logic all_in = s_g_valid && s_w_valid && s_v_valid;
    wire logic fire = out_free && all_in;
    assign s_g_ready = out_free && s_w_valid && s_v_valid;
    assign s_w_ready = out_free && s_g_valid && s_v_valid;
    assign s_v_ready = out_free && s_g_valid && s_w_valid;

    wire logic signed [PW-1:0] prod = PW'($signed(s_g_data)) * PW'($signed({1'b0, cfg_mb}));
    logic signed [DW-1:0] g;
    fpdeep_requant #(.IW(PW), .OW(DW), .SW(SW)) u_mean (.x(prod), .shift(cfg_sb), .y(g));

    logic signed [VW-1:0] d_grad;
    fpdeep_requant #(.IW(GW), .OW(VW), .SW(SW)) u_grad (
        .x(GW'(g)), .shift(cfg_sgv), .y(d_grad));

    wire logic signed [DWW-1:0] wd = DWW'($signed(s_w_data)) * DWW'($signed({1'b0, cfg_mwd}));
    logic signed [DWW-1:0] d_decay;
    fpdeep_requant #(.IW(DWW), .OW(DWW), .SW(SW)) u_decay (
        .x(wd), .shift(cfg_swd), .y(d_decay));

    wire logic signed [VMW-1:0] vm = VMW'($signed(s_v_data)) * VMW'($signed({1'b0, cfg_mmu}));
    logic signed [VMW-1:0] d_keep;
    fpdeep_requant #(.IW(VMW), .OW(VMW), .SW(SW)) u_keep (
        .x(vm), .shift(cfg_smu), .y(d_keep));

    wire logic signed [SUMW-1:0] vsum = SUMW'(d_grad) + SUMW'(d_decay) + SUMW'(d_keep);
    localparam logic signed [SUMW-1:0] VHI = (SUMW'(1) <<< (VW - 1)) - SUMW'(1);
    localparam logic signed [SUMW-1:0] VLO = -(SUMW'(1) <<< (VW - 1));
    wire logic signed [VW-1:0] v_new = (vsum > VHI) ? VHI[VW-1:0]
                                     : (vsum < VLO) ? VLO[VW-1:0] : vsum[VW-1:0];

    wire logic signed [VMW-1:0] vl = VMW'(v_new) * VMW'($signed({1'b0, cfg_mlr}));
    logic signed [VMW-1:0] step;
    fpdeep_requant #(.IW(VMW), .OW(VMW), .SW(SW)) u_step (.x(vl), .shift(cfg_slr), .y(step));

    wire logic signed [VMW:0] wn = (VMW+1)'($signed(s_w_data)) - (VMW+1)'(step);
    localparam logic signed [VMW:0] HI = (VMW+1)'((1 << (DW - 1)) - 1);
    localparam logic signed [VMW:0] LO = -(VMW+1)'(1 << (DW - 1));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
            m_v_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= all_in;
            m_v_valid <= all_in;
            if (fire) begin
                m_data <= (wn > HI) ? HI[DW-1:0] : (wn < LO) ? LO[DW-1:0] : wn[DW-1:0];
                m_v_data <= v_new;
                m_last <= s_w_last;
                m_v_last <= s_w_last;
            end
        end else begin
            // one consumer took its beat while the other has not
            if (m_ready) m_valid <= 1'b0;
            if (m_v_ready) m_v_valid <= 1'b0;
        end
    end

    wire logic unused = s_g_last ^ s_v_last;
endmodule

`default_nettype wire
