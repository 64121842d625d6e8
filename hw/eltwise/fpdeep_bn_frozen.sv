// fpdeep frozen BatchNormalization (docs/numerics.md §16): a per-channel affine of the running
// statistics, forward and backward, over a (C, H, W) tensor streamed in C order.
//   forward (cfg_bwd = 0):  xhat = requant(((x << G) - mean) * z, xshift, XHAT)
//                           y    = requant(gamma * xhat + (beta << H), cfg_yshift, DW)
//   backward (cfg_bwd = 1): dx   = requant((e << H) * factor, eshift, DW)
// G = STAT_GUARD (4) and H = XHAT's fractional bits (12). The per-channel constants come on s_p
// ahead of each channel's cfg_plane elements: forward five words (mean, z, xshift, gamma,
// beta), backward two (factor, eshift), each a sign-extended store word. The unit takes them
// one a cycle, then the channel's elements one a cycle, so a tensor of C channels takes
// C * (words + plane) cycles. One registered output stage.
`default_nettype none

module fpdeep_bn_frozen #(
    parameter int DW   = 16,
    parameter int PW   = 48,   // width of a constant word (a store word)
    parameter int AW   = 32,
    parameter int SW   = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 cfg_bwd,
    input  wire logic [AW-1:0]        cfg_plane,   // elements per channel (H * W)
    input  wire logic signed [SW-1:0] cfg_yshift,  // f_w + H - f_y
    input  wire logic [PW-1:0]        s_p_data,
    input  wire logic                 s_p_valid,
    output logic                      s_p_ready,
    input  wire logic [DW-1:0]        s_x_data,
    input  wire logic                 s_x_last,
    input  wire logic                 s_x_valid,
    output logic                      s_x_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    localparam int G = 4;
    localparam int H = 12;
    localparam int XW = 16;                  // x̂
    localparam int LS = 1 << (SW - 1);       // room for a left shift
    localparam int DDW = DW + G + 2;         // (x << G) - mean, mean within 32 bits
    localparam int MW = (DDW > 33 ? DDW : 33);
    localparam int PZW = MW + 18 + LS;       // d * z (z unsigned, 17 bits)
    localparam int AFW = XW + DW + 2 + LS;   // gamma * x̂ + (beta << H)
    localparam int EPW = DW + H + 33 + LS;   // (e << H) * factor (factor within 32 bits)

    // ---- the channel's constants
    logic signed [31:0]   mean, factor;
    logic        [16:0]   z;
    logic signed [SW-1:0] xshift, eshift;
    logic signed [15:0]   gamma, beta;
    logic [2:0]           taken;      // constant words of this channel taken so far
    logic                 loading, take_p, last_element;
    wire logic [2:0]      words = cfg_bwd ? 3'd2 : 3'd5;

    wire logic out_free = !m_valid || m_ready;
    assign s_x_ready = !loading && out_free;
    wire logic fire = s_x_valid && !loading && out_free;
    fpdeep_channel_words #(.AW(AW), .KW(3)) u_words (
        .clk(clk), .rst(rst), .cfg_words(words), .cfg_plane(cfg_plane), .s_p_valid(s_p_valid),
        .s_p_ready(s_p_ready), .fire(fire), .loading(loading), .take(take_p), .index(taken),
        .ends(last_element));

    always_ff @(posedge clk) begin
        if (take_p) begin
            if (cfg_bwd) begin
                if (taken == 3'd0) factor <= s_p_data[31:0];
                else eshift <= s_p_data[SW-1:0];
            end else begin
                case (taken)
                    3'd0: mean <= s_p_data[31:0];
                    3'd1: z <= s_p_data[16:0];
                    3'd2: xshift <= s_p_data[SW-1:0];
                    3'd3: gamma <= s_p_data[15:0];
                    default: beta <= s_p_data[15:0];
                endcase
            end
        end
    end

    // ---- forward
    wire logic signed [MW-1:0] d = (MW'($signed(s_x_data)) <<< G) - MW'(mean);
    wire logic signed [PZW-1:0] dz = PZW'(d) * PZW'($signed({1'b0, z}));
    logic signed [XW-1:0] xhat;
    fpdeep_requant #(.IW(PZW), .OW(XW), .SW(SW)) u_xhat (.x(dz), .shift(xshift), .y(xhat));
    wire logic signed [AFW-1:0] affine = AFW'(xhat) * AFW'(gamma) + (AFW'(beta) <<< H);
    logic signed [DW-1:0] y;
    fpdeep_requant #(.IW(AFW), .OW(DW), .SW(SW)) u_y (.x(affine), .shift(cfg_yshift), .y(y));

    // ---- backward
    wire logic signed [EPW-1:0] scaled = (EPW'($signed(s_x_data)) <<< H) * EPW'(factor);
    logic signed [DW-1:0] dx;
    fpdeep_requant #(.IW(EPW), .OW(DW), .SW(SW)) u_dx (.x(scaled), .shift(eshift), .y(dx));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= fire;
            if (fire) begin
                m_data <= cfg_bwd ? dx : y;
                m_last <= s_x_last;
            end
        end
    end

    wire logic unused = &{1'b0, s_p_data[PW-1:32], last_element};
endmodule

`default_nettype wire
