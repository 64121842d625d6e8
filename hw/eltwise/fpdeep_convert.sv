// fpdeep format conversion (docs/numerics.md §3): m = convert(s), by cfg_shift (source minus
// destination fractional bits). The controller streams Concat's inputs through it into their
// places in the output, and the output's error back out to each input, one pass each, setting
// the pass's shift. One registered output stage; full throughput; last follows s.
`default_nettype none

module fpdeep_convert #(
    parameter int DW = 16,
    parameter int SW = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic signed [SW-1:0] cfg_shift,
    input  wire logic [DW-1:0]        s_data,
    input  wire logic                 s_last,
    input  wire logic                 s_valid,
    output logic                      s_ready,
    output logic [DW-1:0]             m_data,
    output logic                      m_last,
    output logic                      m_valid,
    input  wire logic                 m_ready
);
    wire logic out_free = !m_valid || m_ready;
    assign s_ready = out_free;

    logic [DW-1:0] y;
    // Wide enough for a left shift by up to 2^(SW-1) - 1 before saturation.
    localparam int IW = DW + (1 << (SW - 1));
    fpdeep_requant #(.IW(IW), .OW(DW), .SW(SW)) u_rq (
        .x(IW'($signed(s_data))), .shift(cfg_shift), .y(y));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_valid <= 1'b0;
        end else if (out_free) begin
            m_valid <= s_valid;
            if (s_valid) begin
                m_data <= y;
                m_last <= s_last;
            end
        end
    end
endmodule

`default_nettype wire
