// fpdeep stream FIFO: valid/ready/last, first-word-fall-through, any DEPTH >= 2.
// Storage is an array read combinationally, so small FIFOs map onto LUT RAM; the full/empty
// state is an explicit occupancy count so DEPTH need not be a power of two.
`default_nettype none

module fpdeep_stream_fifo #(
    parameter int WIDTH = 16,
    parameter int DEPTH = 4
) (
    input  wire logic             clk,
    input  wire logic             rst,
    // upstream
    input  wire logic [WIDTH-1:0] s_data,
    input  wire logic             s_last,
    input  wire logic             s_valid,
    output logic                  s_ready,
    // downstream
    output logic      [WIDTH-1:0] m_data,
    output logic                  m_last,
    output logic                  m_valid,
    input  wire logic             m_ready,
    // occupancy, for status counters
    output logic [$clog2(DEPTH+1)-1:0] count
);
    localparam int PW = (DEPTH > 1) ? $clog2(DEPTH) : 1;

    logic [WIDTH:0] mem [DEPTH];
    logic [PW-1:0] wr_ptr, rd_ptr;

    wire logic push = s_valid && s_ready;
    wire logic pop  = m_valid && m_ready;

    assign s_ready = (count != DEPTH[$clog2(DEPTH+1)-1:0]);
    assign m_valid = (count != '0);
    assign {m_last, m_data} = mem[rd_ptr];

    function automatic logic [PW-1:0] next_ptr(input logic [PW-1:0] p);
        // assigned to the function's name: Yosys 0.70 does not parse `return`
        next_ptr = (p == PW'(DEPTH - 1)) ? '0 : p + 1'b1;
    endfunction

    always_ff @(posedge clk) begin
        if (push) mem[wr_ptr] <= {s_last, s_data};
        if (rst) begin
            wr_ptr <= '0;
            rd_ptr <= '0;
            count  <= '0;
        end else begin
            if (push) wr_ptr <= next_ptr(wr_ptr);
            if (pop)  rd_ptr <= next_ptr(rd_ptr);
            if (push && !pop) count <= count + 1'b1;
            else if (pop && !push) count <= count - 1'b1;
        end
    end
endmodule

`default_nettype wire
