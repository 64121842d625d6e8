// fpdeep partial-sum reduction for a layer split over several slices (docs/numerics.md §4):
// each slice's BP engine sends its raw 48-bit partial input error; the partials are added
// beat by beat, wrapping like the accumulator they extend (ACCW bits), and the last addition
// requantises the total once (cfg_final = 1: m_data = requant(a + b, cfg_shift), sign-extended
// to ACCW bits), so splitting a layer changes no bit of its input error. The two input streams
// are joined beat by beat; last follows s_a. One registered output stage.
`default_nettype none

module fpdeep_psum #(
    parameter int DW   = 16,
    parameter int ACCW = 48,
    parameter int SW   = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 cfg_final,
    input  wire logic signed [SW-1:0] cfg_shift,
    input  wire logic [ACCW-1:0]      s_a_data,
    input  wire logic                 s_a_last,
    input  wire logic                 s_a_valid,
    output logic                      s_a_ready,
    input  wire logic [ACCW-1:0]      s_b_data,
    input  wire logic                 s_b_last,   // ignored: s_a frames the tensor
    input  wire logic                 s_b_valid,
    output logic                      s_b_ready,
    output logic [ACCW-1:0]           m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    wire logic out_free = !m_valid || m_ready;
    wire logic fire = out_free && s_a_valid && s_b_valid;
    assign s_a_ready = out_free && s_b_valid;
    assign s_b_ready = out_free && s_a_valid;

    wire logic [ACCW-1:0] sum = s_a_data + s_b_data;   // wraps modulo 2^ACCW
    logic signed [DW-1:0] y;
    fpdeep_requant #(.IW(ACCW), .OW(DW), .SW(SW)) u_rq (.x(sum), .shift(cfg_shift), .y(y));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= s_a_valid && s_b_valid;
            if (fire) begin
                m_data <= cfg_final ? ACCW'(y) : sum;
                m_last <= s_a_last;
            end
        end
    end

    wire logic unused = s_b_last;
endmodule

`default_nettype wire
