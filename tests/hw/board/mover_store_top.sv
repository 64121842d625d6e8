// A read mover on a two-bank store (16 and 8 words of 48 bits) with a write port for the
// testbench to fill it: what tests/hw/board/tb_mover.py drives.
`default_nettype none

module mover_store_top (
    input  wire logic        clk,
    input  wire logic        rst,
    // fill the store
    input  wire logic        wr_req,
    input  wire logic [7:0]  wr_bank,
    input  wire logic [19:0] wr_addr,
    input  wire logic [47:0] wr_data,
    output logic             wr_gnt,
    // the mover's command
    input  wire logic        cmd_valid,
    input  wire logic [7:0]  cmd_bank,
    input  wire logic [19:0] cmd_addr,
    input  wire logic [23:0] cmd_len,
    input  wire logic        cmd_hold,
    input  wire logic [1:0]  cmd_parts,
    input  wire logic        cmd_chain,
    output logic             busy,
    // its stream
    output logic      [47:0] m_data,
    output logic             m_last,
    output logic             m_valid,
    input  wire logic        m_ready
);
    localparam logic [63:0] DEPTHS = {32'd8, 32'd16};
    logic        rd_req, rd_gnt, rd_valid, moved;
    logic [7:0]  rd_bank;
    logic [19:0] rd_addr;
    logic [47:0] rd_data;
    wire logic unused = moved;

    fpdeep_mover_rd u_mover (
        .clk, .rst, .cmd_valid, .cmd_bank, .cmd_addr, .cmd_len, .cmd_hold, .cmd_parts,
        .cmd_chain, .busy, .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .m_data, .m_last, .m_valid, .m_ready, .moved);

    fpdeep_store #(.NB(2), .NR(1), .NW(1), .DEPTHS(DEPTHS)) u_store (
        .clk, .rst, .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .wr_req, .wr_bank, .wr_addr, .wr_data, .wr_gnt);
endmodule

`default_nettype wire
