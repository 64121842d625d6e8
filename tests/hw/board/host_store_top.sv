// The host interface on a two-bank store (16 words of 48 bits, 8 words of 16 bits) with two
// instruction memories of 8 words: what tests/hw/board/tb_host.py drives.
`default_nettype none

module host_store_top (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic [63:0] s_axis_tdata,
    input  wire logic        s_axis_tvalid,
    output logic             s_axis_tready,
    input  wire logic        s_axis_tlast,
    output logic      [63:0] m_axis_tdata,
    output logic             m_axis_tvalid,
    input  wire logic        m_axis_tready,
    output logic             m_axis_tlast,
    output logic      [1:0]  written,
    output logic      [1:0]  programmed,
    output logic             fault,
    output logic      [7:0]  fault_code,
    output logic             prog_we,
    output logic      [7:0]  prog_res,
    output logic      [2:0]  prog_addr,
    output logic      [63:0] prog_data
);
    localparam logic [63:0] DEPTHS = {32'd8, 32'd16};
    localparam logic [15:0] WIDTHS = {8'd16, 8'd48};
    logic        wr_req, wr_gnt, rd_req, rd_gnt, rd_valid;
    logic [7:0]  wr_bank, rd_bank;
    logic [19:0] wr_addr, rd_addr;
    logic [47:0] wr_data, rd_data;

    fpdeep_host #(.NB(2), .NRES(2), .PD(8), .DEPTHS(DEPTHS)) u_host (
        .clk, .rst, .s_axis_tdata, .s_axis_tvalid, .s_axis_tready, .s_axis_tlast,
        .m_axis_tdata, .m_axis_tvalid, .m_axis_tready, .m_axis_tlast,
        .wr_req, .wr_bank, .wr_addr, .wr_data, .wr_gnt,
        .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .prog_we, .prog_res, .prog_addr, .prog_data, .written, .programmed, .fault, .fault_code);

    fpdeep_store #(.NB(2), .NR(1), .NW(1), .DEPTHS(DEPTHS), .WIDTHS(WIDTHS)) u_store (
        .clk, .rst, .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .wr_req, .wr_bank, .wr_addr, .wr_data, .wr_gnt);
endmodule

`default_nettype wire
