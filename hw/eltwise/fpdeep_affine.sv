// fpdeep per-channel Scale and Bias, trained (docs/numerics.md §18; fpdeep.golden.affine): a
// (C, H, W) tensor streamed in C order, each channel's word on s_p ahead of its cfg_plane
// elements (a single value: one channel of all C * H * W elements).
//   cfg_pass 0, forward:  Scale y = requant(x * s, cfg_shift)
//                         Bias  y = requant((x << cfg_lx) + (b << cfg_lp), cfg_shift)
//   cfg_pass 1, backward: Scale dx = requant(e * s, cfg_shift); Bias dx = requant(e, cfg_shift)
//   cfg_pass 2, gradient: s_p brings the channel's accumulator so far; after the channel, m_g
//                         sends it plus Σ e · x (Scale, x on s_y) or Σ e (Bias) over the
//                         channel's elements (e on s_x), wrapped to ACCW bits
// The parameter is the low DW bits of its s_p word (a sign-extended store word). The unit
// takes a channel's word in one cycle, then its elements one a cycle, so a pass over C
// channels takes C * (1 + plane) cycles. One registered output stage on m and on m_g.
`default_nettype none

module fpdeep_affine #(
    parameter int DW   = 16,
    parameter int ACCW = 48,
    parameter int AW   = 32,
    parameter int SW   = 7,
    parameter int LW   = 5
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 cfg_bias,   // 1: Bias, 0: Scale
    input  wire logic [1:0]           cfg_pass,   // 0 forward, 1 backward, 2 gradient
    input  wire logic [AW-1:0]        cfg_plane,  // elements per channel word
    input  wire logic [LW-1:0]        cfg_lx,     // Bias forward: left shifts aligning x and b
    input  wire logic [LW-1:0]        cfg_lp,
    input  wire logic signed [SW-1:0] cfg_shift,
    input  wire logic [ACCW-1:0]      s_p_data,
    input  wire logic                 s_p_valid,
    output logic                      s_p_ready,
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    input  wire logic [DW-1:0]        s_y_data,
    input  wire logic                 s_y_last,   // ignored: s_x frames the tensor
    input  wire logic                 s_y_valid,
    output logic                      s_y_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready,
    output logic [ACCW-1:0]           m_g_data,
    output logic                      m_g_last,
    output logic                      m_g_valid,
    input  wire logic                 m_g_ready
);
    localparam int LS = 1 << (SW - 1);              // room for the requantiser's left shift
    localparam int YW = 2 * DW + (1 << LW) + 1 + LS; // (x * s) or (x << lx) + (b << lp)

    logic signed [ACCW-1:0] p;     // the channel's parameter, or its accumulator (gradient)
    logic                   loading, take_p, ends;
    logic [0:0]             index;

    wire logic grad = cfg_pass == 2'd2;
    wire logic both = grad && !cfg_bias;  // the gradient of a Scale joins e and x
    wire logic free = grad ? (!m_g_valid || m_g_ready) : (!m_valid || m_ready);
    wire logic can = !loading && free;
    assign s_x_ready = can && (!both || s_y_valid);
    assign s_y_ready = can && both && s_x_valid;
    wire logic fire = can && s_x_valid && (!both || s_y_valid);
    fpdeep_channel_words #(.AW(AW), .KW(1)) u_words (
        .clk(clk), .rst(rst), .cfg_words(1'b1), .cfg_plane(cfg_plane), .s_p_valid(s_p_valid),
        .s_p_ready(s_p_ready), .fire(fire), .loading(loading), .take(take_p), .index(index),
        .ends(ends));

    wire logic signed [DW-1:0] x = s_x_data;
    wire logic signed [DW-1:0] pw = p[DW-1:0];

    // ---- forward and backward: one product or sum, requantised once
    wire logic signed [YW-1:0] prod = cfg_bias ? YW'(x) : YW'(x) * YW'(pw);
    wire logic signed [YW-1:0] add = cfg_bias && cfg_pass == 2'd0 ? YW'(pw) <<< cfg_lp : '0;
    wire logic signed [YW-1:0] sum = cfg_bias && cfg_pass == 2'd0
                                     ? (prod <<< cfg_lx) + add : prod;
    logic signed [DW-1:0] y;
    fpdeep_requant #(.IW(YW), .OW(DW), .SW(SW)) u_y (.x(sum), .shift(cfg_shift), .y(y));

    // ---- gradient: the accumulator plus e (Bias) or e * x (Scale), wrapped
    wire logic signed [2*DW-1:0] ex = cfg_bias ? (2*DW)'(x)
                                               : (2*DW)'(x) * (2*DW)'($signed(s_y_data));
    wire logic signed [ACCW-1:0] acc = p + ACCW'(ex);

    always_ff @(posedge clk) begin
        if (take_p) p <= s_p_data;
        else if (fire && grad) p <= acc;
        if (rst) begin
            m_valid <= 1'b0;
            m_g_valid <= 1'b0;
        end else begin
            if (!grad && (!m_valid || m_ready)) begin
                m_valid <= fire;
                if (fire) begin
                    m_data <= y;
                    m_last <= s_x_last;
                end
            end
            if (grad && (!m_g_valid || m_g_ready)) begin
                m_g_valid <= fire && ends;
                if (fire && ends) begin
                    m_g_data <= acc;
                    m_g_last <= s_x_last;
                end
            end
        end
    end

    wire logic unused = &{1'b0, s_y_last, index};
endmodule

`default_nettype wire
