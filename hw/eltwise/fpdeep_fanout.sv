// fpdeep error fan-out (docs/numerics.md §8 backward): one error stream is copied to two
// outputs, each converted to its own input's error format (cfg_shift_a / cfg_shift_b).
// A beat leaves the input only when both copies have been accepted, so a slow reader stalls
// the other (each copy waits in its own output register).
`default_nettype none

module fpdeep_fanout #(
    parameter int DW = 16,
    parameter int SW = 7
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic signed [SW-1:0] cfg_shift_a,
    input  wire logic signed [SW-1:0] cfg_shift_b,
    input  wire logic [DW-1:0]        s_data,
    input  wire logic                 s_last,
    input  wire logic                 s_valid,
    output logic                      s_ready,
    output logic [DW-1:0]             m_a_data,
    output logic                      m_a_last,
    output logic                      m_a_valid,
    input  wire logic                 m_a_ready,
    output logic [DW-1:0]             m_b_data,
    output logic                      m_b_last,
    output logic                      m_b_valid,
    input  wire logic                 m_b_ready
);
    localparam int IW = DW + (1 << (SW - 1));

    wire logic a_free = !m_a_valid || m_a_ready;
    wire logic b_free = !m_b_valid || m_b_ready;
    assign s_ready = a_free && b_free;
    wire logic fire = s_valid && s_ready;

    logic [DW-1:0] ya, yb;
    fpdeep_requant #(.IW(IW), .OW(DW), .SW(SW)) u_a (
        .x(IW'($signed(s_data))), .shift(cfg_shift_a), .y(ya));
    fpdeep_requant #(.IW(IW), .OW(DW), .SW(SW)) u_b (
        .x(IW'($signed(s_data))), .shift(cfg_shift_b), .y(yb));

    always_ff @(posedge clk) begin
        if (rst) begin
            m_a_valid <= 1'b0;
            m_b_valid <= 1'b0;
        end else begin
            if (m_a_ready) m_a_valid <= 1'b0;
            if (m_b_ready) m_b_valid <= 1'b0;
            if (fire) begin
                {m_a_valid, m_a_data, m_a_last} <= {1'b1, ya, s_last};
                {m_b_valid, m_b_data, m_b_last} <= {1'b1, yb, s_last};
            end
        end
    end
endmodule

`default_nettype wire
