// fpdeep residual add (docs/numerics.md §8), forward and error fan-in in one streaming unit:
//   y = requant((a << cfg_la) + (b << cfg_lb), cfg_shift)
// Forward aligns both inputs to the larger fraction (cfg_la/cfg_lb = F - f_i) and requantises
// once to the output format; fan-in of two error contributions is la = lb = shift = 0 (exact
// sum, saturated once). The two input streams are joined beat by beat; last follows s_a.
`default_nettype none

module fpdeep_add #(
    parameter int DW = 16,
    parameter int SW = 7,
    parameter int LW = 5    // left shifts 0 .. 2^LW - 1
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic [LW-1:0]        cfg_la,
    input  wire logic [LW-1:0]        cfg_lb,
    input  wire logic signed [SW-1:0] cfg_shift,
    input  wire logic [DW-1:0]        s_a_data,
    input  wire logic                 s_a_last,
    input  wire logic                 s_a_valid,
    output logic                      s_a_ready,
    input  wire logic [DW-1:0]        s_b_data,
    input  wire logic                 s_b_last,   // ignored: s_a frames the tensor
    input  wire logic                 s_b_valid,
    output logic                      s_b_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    // Room for the aligned sum and for a left-shifting requantisation.
    localparam int IW = DW + (1 << LW) + (1 << (SW - 1)) + 1;

    wire logic out_free = !m_valid || m_ready;
    wire logic fire = out_free && s_a_valid && s_b_valid;
    assign s_a_ready = out_free && s_b_valid;
    assign s_b_ready = out_free && s_a_valid;

    wire logic signed [IW-1:0] sum = (IW'($signed(s_a_data)) <<< cfg_la) +
                                     (IW'($signed(s_b_data)) <<< cfg_lb);
    logic [DW-1:0] y;
    fpdeep_requant #(.IW(IW), .OW(DW), .SW(SW)) u_rq (.x(sum), .shift(cfg_shift), .y(y));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= s_a_valid && s_b_valid;
            if (fire) begin
                m_data <= y;
                m_last <= s_a_last;
            end
        end
    end

    wire logic unused = s_b_last;
endmodule

`default_nettype wire
