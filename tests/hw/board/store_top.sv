// A small tensor store for tests/hw/board/tb_store.py: three banks of 16 words with one, two
// and three read ports, the middle one 16 bits wide, shared by five readers and three writers.
`default_nettype none

module store_top (
    input  wire logic         clk,
    input  wire logic         rst,
    input  wire logic [4:0]   rd_req,
    input  wire logic [39:0]  rd_bank,
    input  wire logic [99:0]  rd_addr,
    output logic      [4:0]   rd_gnt,
    output logic      [4:0]   rd_valid,
    output logic      [239:0] rd_data,
    input  wire logic [2:0]   wr_req,
    input  wire logic [23:0]  wr_bank,
    input  wire logic [59:0]  wr_addr,
    input  wire logic [143:0] wr_data,
    output logic      [2:0]   wr_gnt
);
    fpdeep_store #(
        .NB(3), .NR(5), .NW(3),
        .DEPTHS({32'd16, 32'd16, 32'd16}),
        .WIDTHS({8'd48, 8'd16, 8'd48}),
        .READS({2'd3, 2'd2, 2'd1})
    ) u_store (.*);
endmodule

`default_nettype wire
