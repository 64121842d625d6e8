// The host interface on a two-bank store (16 words of 48 bits, 8 words of 16 bits) with two
// instruction memories of 8 words, and off-chip memory (bank 255) through a memory reader
// and writer on the memory port and a 4 KB memory model: what tests/hw/board/tb_host.py
// drives.
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
    // the host's off-chip memory command and streams
    logic        mem_rd_cmd, mem_wr_cmd, mem_wr_busy, mem_rd_busy, mem_rd_err, mem_wr_err;
    logic [47:0] mem_addr, mem_rd_data, mem_wr_data;
    logic [1:0]  mem_slot;
    logic [23:0] mem_len;
    logic        mem_rd_last, mem_rd_valid, mem_rd_ready, mem_wr_last, mem_wr_valid,
                 mem_wr_ready, mem_wr_err_last, rd_moved, wr_moved;

    // resource 0 has 4 instruction words, resource 1 has 8
    fpdeep_host #(.NB(2), .NRES(2), .PD(8), .DEPTHS(DEPTHS), .PDS({32'd8, 32'd4}),
                  .DRAM(1'b1)) u_host (
        .clk, .rst, .s_axis_tdata, .s_axis_tvalid, .s_axis_tready, .s_axis_tlast,
        .m_axis_tdata, .m_axis_tvalid, .m_axis_tready, .m_axis_tlast,
        .wr_req, .wr_bank, .wr_addr, .wr_data, .wr_gnt,
        .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .mem_rd_cmd, .mem_wr_cmd, .mem_addr, .mem_slot, .mem_len, .mem_wr_busy,
        .mem_rd_data, .mem_rd_last, .mem_rd_valid, .mem_rd_ready,
        .mem_wr_data, .mem_wr_last, .mem_wr_valid, .mem_wr_ready,
        .prog_we, .prog_res, .prog_addr, .prog_data, .written, .programmed, .fault, .fault_code);

    // AXI4 between the memory reader and writer, the port and the memory model
    logic        ar_valid, ar_ready, r_valid, r_ready, r_last, aw_valid, aw_ready, w_valid,
                 w_ready, w_last, b_valid, b_ready;
    logic [63:0] ar_addr, aw_addr, r_data, w_data;
    logic [7:0]  ar_len, aw_len, w_strb;
    logic [1:0]  r_resp, b_resp;
    logic        awid, arid, bid, rid, awlock, arlock, wlast, rlast;
    logic        awvalid, awready, wvalid, wready, bvalid, bready, arvalid, arready, rvalid,
                 rready;
    logic [63:0] awaddr, araddr, wdata, rdata;
    logic [7:0]  awlen, arlen, wstrb;
    logic [2:0]  awsize, arsize, awprot, arprot;
    logic [1:0]  awburst, arburst, bresp, rresp;
    logic [3:0]  awcache, arcache, awqos, arqos;

    fpdeep_dram_rd #(.DW(64), .AWD(64), .BURST(4)) u_rd (
        .clk, .rst, .cmd_valid(mem_rd_cmd), .cmd_addr(64'(mem_addr)), .cmd_slot(mem_slot),
        .cmd_len(mem_len), .cmd_parts(2'd0), .cmd_chain(1'b0), .busy(mem_rd_busy),
        .err(mem_rd_err), .ar_valid, .ar_ready, .ar_addr, .ar_len, .r_valid, .r_ready, .r_data,
        .r_resp, .r_last, .m_data(mem_rd_data), .m_last(mem_rd_last), .m_valid(mem_rd_valid),
        .m_ready(mem_rd_ready), .moved(rd_moved));
    fpdeep_dram_wr #(.DW(64), .AWD(64), .BURST(4)) u_wr (
        .clk, .rst, .cmd_valid(mem_wr_cmd), .cmd_addr(64'(mem_addr)), .cmd_slot(mem_slot),
        .cmd_len(mem_len), .cmd_parts(2'd0), .busy(mem_wr_busy), .err_last(mem_wr_err_last),
        .err(mem_wr_err), .aw_valid, .aw_ready, .aw_addr, .aw_len, .w_valid, .w_ready, .w_data,
        .w_strb, .w_last, .b_valid, .b_ready, .b_resp, .s_data(mem_wr_data),
        .s_last(mem_wr_last), .s_valid(mem_wr_valid), .s_ready(mem_wr_ready),
        .moved(wr_moved));
    fpdeep_dram_port #(.NR(1), .NW(1), .DW(64), .AWD(64), .IDW(1)) u_port (
        .clk, .rst, .ar_valid, .ar_ready, .ar_addr, .ar_len, .r_valid, .r_ready, .r_data,
        .r_resp, .r_last, .aw_valid, .aw_ready, .aw_addr, .aw_len, .w_valid, .w_ready, .w_data,
        .w_strb, .w_last, .b_valid, .b_ready, .b_resp,
        .m_axi_awid(awid), .m_axi_awaddr(awaddr), .m_axi_awlen(awlen), .m_axi_awsize(awsize),
        .m_axi_awburst(awburst), .m_axi_awlock(awlock), .m_axi_awcache(awcache),
        .m_axi_awprot(awprot), .m_axi_awqos(awqos), .m_axi_awvalid(awvalid),
        .m_axi_awready(awready), .m_axi_wdata(wdata), .m_axi_wstrb(wstrb), .m_axi_wlast(wlast),
        .m_axi_wvalid(wvalid), .m_axi_wready(wready), .m_axi_bid(bid), .m_axi_bresp(bresp),
        .m_axi_bvalid(bvalid), .m_axi_bready(bready), .m_axi_arid(arid),
        .m_axi_araddr(araddr), .m_axi_arlen(arlen), .m_axi_arsize(arsize),
        .m_axi_arburst(arburst), .m_axi_arlock(arlock), .m_axi_arcache(arcache),
        .m_axi_arprot(arprot), .m_axi_arqos(arqos), .m_axi_arvalid(arvalid),
        .m_axi_arready(arready), .m_axi_rid(rid), .m_axi_rdata(rdata), .m_axi_rresp(rresp),
        .m_axi_rlast(rlast), .m_axi_rvalid(rvalid), .m_axi_rready(rready));
    fpdeep_mem_model #(.DW(64), .IDW(1), .AWD(64), .BYTES(4096), .LATENCY(5), .NUM(1),
                       .DEN(2)) u_memory (
        .clk, .rst,
        .s_axi_awid(awid), .s_axi_awaddr(awaddr), .s_axi_awlen(awlen), .s_axi_awsize(awsize),
        .s_axi_awburst(awburst), .s_axi_awlock(awlock), .s_axi_awcache(awcache),
        .s_axi_awprot(awprot), .s_axi_awqos(awqos), .s_axi_awvalid(awvalid),
        .s_axi_awready(awready), .s_axi_wdata(wdata), .s_axi_wstrb(wstrb), .s_axi_wlast(wlast),
        .s_axi_wvalid(wvalid), .s_axi_wready(wready), .s_axi_bid(bid), .s_axi_bresp(bresp),
        .s_axi_bvalid(bvalid), .s_axi_bready(bready), .s_axi_arid(arid),
        .s_axi_araddr(araddr), .s_axi_arlen(arlen), .s_axi_arsize(arsize),
        .s_axi_arburst(arburst), .s_axi_arlock(arlock), .s_axi_arcache(arcache),
        .s_axi_arprot(arprot), .s_axi_arqos(arqos), .s_axi_arvalid(arvalid),
        .s_axi_arready(arready), .s_axi_rid(rid), .s_axi_rdata(rdata), .s_axi_rresp(rresp),
        .s_axi_rlast(rlast), .s_axi_rvalid(rvalid), .s_axi_rready(rready));

    fpdeep_store #(.NB(2), .NR(1), .NW(1), .DEPTHS(DEPTHS), .WIDTHS(WIDTHS)) u_store (
        .clk, .rst, .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .wr_req, .wr_bank, .wr_addr, .wr_data, .wr_gnt);
endmodule

`default_nettype wire
