// fpdeep skid buffer: a two-entry register slice that cuts the valid/data path and the ready
// path of a stream, so long routes between engines close timing at full throughput.
`default_nettype none

module fpdeep_skid_buffer #(
    parameter int WIDTH = 16
) (
    input  wire logic             clk,
    input  wire logic             rst,
    input  wire logic [WIDTH-1:0] s_data,
    input  wire logic             s_last,
    input  wire logic             s_valid,
    output logic                  s_ready,
    output logic      [WIDTH-1:0] m_data,
    output logic                  m_last,
    output logic                  m_valid,
    input  wire logic             m_ready
);
    // Main output register plus one skid register that catches the beat accepted in the
    // cycle when the downstream drops ready (s_ready is registered, so it lags by a cycle).
    logic [WIDTH:0] out_q, skid_q;
    logic           out_v, skid_v;

    assign s_ready = !skid_v;
    assign m_valid = out_v;
    assign {m_last, m_data} = out_q;

    always_ff @(posedge clk) begin
        if (rst) begin
            out_v  <= 1'b0;
            skid_v <= 1'b0;
        end else begin
            if (!out_v || m_ready) begin
                // output register is free this cycle: refill from skid first, then upstream
                if (skid_v) begin
                    out_q  <= skid_q;
                    out_v  <= 1'b1;
                    skid_v <= 1'b0;
                end else begin
                    out_q <= {s_last, s_data};
                    out_v <= s_valid;
                end
            end else if (s_valid && s_ready) begin
                skid_q <= {s_last, s_data};
                skid_v <= 1'b1;
            end
        end
    end
endmodule

`default_nettype wire
