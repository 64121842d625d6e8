// Two off-chip readers and two writers on one AXI4 master (fpdeep_dram_rd, fpdeep_dram_wr,
// fpdeep_dram_port), each client's command and stream on ports of its own: what
// tests/hw/board/tb_dram.py drives, with cocotbext-axi's AxiRam on m_axi.
`default_nettype none

module dram_top #(
    parameter int DW = 64,
    parameter int AWD = 32,
    parameter int BURST = 4
) (
    input  wire logic             clk,
    input  wire logic             rst,
    // reader 0: its command and stream
    input  wire logic             rd0_cmd_valid,
    input  wire logic [AWD-1:0]   rd0_cmd_addr,
    input  wire logic [1:0]       rd0_cmd_slot,
    input  wire logic [23:0]      rd0_cmd_len,
    input  wire logic [1:0]       rd0_cmd_parts,
    input  wire logic             rd0_cmd_chain,
    output logic                  rd0_busy,
    output logic                  rd0_err,
    output logic      [47:0]      rd0_m_data,
    output logic                  rd0_m_last,
    output logic                  rd0_m_valid,
    input  wire logic             rd0_m_ready,
    // reader 1: its command and stream
    input  wire logic             rd1_cmd_valid,
    input  wire logic [AWD-1:0]   rd1_cmd_addr,
    input  wire logic [1:0]       rd1_cmd_slot,
    input  wire logic [23:0]      rd1_cmd_len,
    input  wire logic [1:0]       rd1_cmd_parts,
    input  wire logic             rd1_cmd_chain,
    output logic                  rd1_busy,
    output logic                  rd1_err,
    output logic      [47:0]      rd1_m_data,
    output logic                  rd1_m_last,
    output logic                  rd1_m_valid,
    input  wire logic             rd1_m_ready,
    // writer 0: its command and stream
    input  wire logic             wr0_cmd_valid,
    input  wire logic [AWD-1:0]   wr0_cmd_addr,
    input  wire logic [1:0]       wr0_cmd_slot,
    input  wire logic [23:0]      wr0_cmd_len,
    input  wire logic [1:0]       wr0_cmd_parts,
    output logic                  wr0_busy,
    output logic                  wr0_err_last,
    output logic                  wr0_err,
    input  wire logic [47:0]      wr0_s_data,
    input  wire logic             wr0_s_last,
    input  wire logic             wr0_s_valid,
    output logic                  wr0_s_ready,
    // writer 1: its command and stream
    input  wire logic             wr1_cmd_valid,
    input  wire logic [AWD-1:0]   wr1_cmd_addr,
    input  wire logic [1:0]       wr1_cmd_slot,
    input  wire logic [23:0]      wr1_cmd_len,
    input  wire logic [1:0]       wr1_cmd_parts,
    output logic                  wr1_busy,
    output logic                  wr1_err_last,
    output logic                  wr1_err,
    input  wire logic [47:0]      wr1_s_data,
    input  wire logic             wr1_s_last,
    input  wire logic             wr1_s_valid,
    output logic                  wr1_s_ready,
    // the memory
    output logic                  m_axi_awid,
    output logic      [AWD-1:0]   m_axi_awaddr,
    output logic      [7:0]       m_axi_awlen,
    output logic      [2:0]       m_axi_awsize,
    output logic      [1:0]       m_axi_awburst,
    output logic                  m_axi_awlock,
    output logic      [3:0]       m_axi_awcache,
    output logic      [2:0]       m_axi_awprot,
    output logic      [3:0]       m_axi_awqos,
    output logic                  m_axi_awvalid,
    input  wire logic             m_axi_awready,
    output logic      [DW-1:0]    m_axi_wdata,
    output logic      [DW/8-1:0]  m_axi_wstrb,
    output logic                  m_axi_wlast,
    output logic                  m_axi_wvalid,
    input  wire logic             m_axi_wready,
    input  wire logic             m_axi_bid,
    input  wire logic [1:0]       m_axi_bresp,
    input  wire logic             m_axi_bvalid,
    output logic                  m_axi_bready,
    output logic                  m_axi_arid,
    output logic      [AWD-1:0]   m_axi_araddr,
    output logic      [7:0]       m_axi_arlen,
    output logic      [2:0]       m_axi_arsize,
    output logic      [1:0]       m_axi_arburst,
    output logic                  m_axi_arlock,
    output logic      [3:0]       m_axi_arcache,
    output logic      [2:0]       m_axi_arprot,
    output logic      [3:0]       m_axi_arqos,
    output logic                  m_axi_arvalid,
    input  wire logic             m_axi_arready,
    input  wire logic             m_axi_rid,
    input  wire logic [DW-1:0]    m_axi_rdata,
    input  wire logic [1:0]       m_axi_rresp,
    input  wire logic             m_axi_rlast,
    input  wire logic             m_axi_rvalid,
    output logic                  m_axi_rready
);
    localparam int SB = DW / 8;
    logic [1:0]       ar_valid, ar_ready, r_valid, r_ready, r_last;
    logic [2*AWD-1:0] ar_addr, aw_addr;
    logic [15:0]      ar_len, aw_len;
    logic [2*DW-1:0]  r_data, w_data;
    logic [3:0]       r_resp, b_resp;
    logic [1:0]       aw_valid, aw_ready, w_valid, w_ready, w_last, b_valid, b_ready;
    logic [2*SB-1:0]  w_strb;
    logic [1:0]       rd_moved, wr_moved;
    wire logic unused = |{rd_moved, wr_moved};

    fpdeep_dram_rd #(.DW(DW), .AWD(AWD), .BURST(BURST)) u_rd0 (
        .clk, .rst, .cmd_valid(rd0_cmd_valid), .cmd_addr(rd0_cmd_addr),
        .cmd_slot(rd0_cmd_slot), .cmd_len(rd0_cmd_len), .cmd_parts(rd0_cmd_parts),
        .cmd_chain(rd0_cmd_chain), .busy(rd0_busy), .err(rd0_err),
        .ar_valid(ar_valid[0]), .ar_ready(ar_ready[0]), .ar_addr(ar_addr[0 +: AWD]),
        .ar_len(ar_len[0 +: 8]), .r_valid(r_valid[0]), .r_ready(r_ready[0]),
        .r_data(r_data[0 +: DW]), .r_resp(r_resp[0 +: 2]), .r_last(r_last[0]),
        .m_data(rd0_m_data), .m_last(rd0_m_last), .m_valid(rd0_m_valid), .m_ready(rd0_m_ready),
        .moved(rd_moved[0]));

    fpdeep_dram_rd #(.DW(DW), .AWD(AWD), .BURST(BURST)) u_rd1 (
        .clk, .rst, .cmd_valid(rd1_cmd_valid), .cmd_addr(rd1_cmd_addr),
        .cmd_slot(rd1_cmd_slot), .cmd_len(rd1_cmd_len), .cmd_parts(rd1_cmd_parts),
        .cmd_chain(rd1_cmd_chain), .busy(rd1_busy), .err(rd1_err),
        .ar_valid(ar_valid[1]), .ar_ready(ar_ready[1]), .ar_addr(ar_addr[AWD +: AWD]),
        .ar_len(ar_len[8 +: 8]), .r_valid(r_valid[1]), .r_ready(r_ready[1]),
        .r_data(r_data[DW +: DW]), .r_resp(r_resp[2 +: 2]), .r_last(r_last[1]),
        .m_data(rd1_m_data), .m_last(rd1_m_last), .m_valid(rd1_m_valid), .m_ready(rd1_m_ready),
        .moved(rd_moved[1]));

    fpdeep_dram_wr #(.DW(DW), .AWD(AWD), .BURST(BURST)) u_wr0 (
        .clk, .rst, .cmd_valid(wr0_cmd_valid), .cmd_addr(wr0_cmd_addr),
        .cmd_slot(wr0_cmd_slot), .cmd_len(wr0_cmd_len), .cmd_parts(wr0_cmd_parts),
        .busy(wr0_busy), .err_last(wr0_err_last), .err(wr0_err),
        .aw_valid(aw_valid[0]), .aw_ready(aw_ready[0]), .aw_addr(aw_addr[0 +: AWD]),
        .aw_len(aw_len[0 +: 8]), .w_valid(w_valid[0]), .w_ready(w_ready[0]),
        .w_data(w_data[0 +: DW]), .w_strb(w_strb[0 +: SB]), .w_last(w_last[0]),
        .b_valid(b_valid[0]), .b_ready(b_ready[0]), .b_resp(b_resp[0 +: 2]),
        .s_data(wr0_s_data), .s_last(wr0_s_last), .s_valid(wr0_s_valid), .s_ready(wr0_s_ready),
        .moved(wr_moved[0]));

    fpdeep_dram_wr #(.DW(DW), .AWD(AWD), .BURST(BURST)) u_wr1 (
        .clk, .rst, .cmd_valid(wr1_cmd_valid), .cmd_addr(wr1_cmd_addr),
        .cmd_slot(wr1_cmd_slot), .cmd_len(wr1_cmd_len), .cmd_parts(wr1_cmd_parts),
        .busy(wr1_busy), .err_last(wr1_err_last), .err(wr1_err),
        .aw_valid(aw_valid[1]), .aw_ready(aw_ready[1]), .aw_addr(aw_addr[AWD +: AWD]),
        .aw_len(aw_len[8 +: 8]), .w_valid(w_valid[1]), .w_ready(w_ready[1]),
        .w_data(w_data[DW +: DW]), .w_strb(w_strb[SB +: SB]), .w_last(w_last[1]),
        .b_valid(b_valid[1]), .b_ready(b_ready[1]), .b_resp(b_resp[2 +: 2]),
        .s_data(wr1_s_data), .s_last(wr1_s_last), .s_valid(wr1_s_valid), .s_ready(wr1_s_ready),
        .moved(wr_moved[1]));

    fpdeep_dram_port #(.NR(2), .NW(2), .DW(DW), .AWD(AWD), .IDW(1)) u_port (
        .clk, .rst, .ar_valid, .ar_ready, .ar_addr, .ar_len, .r_valid, .r_ready, .r_data,
        .r_resp, .r_last, .aw_valid, .aw_ready, .aw_addr, .aw_len, .w_valid, .w_ready, .w_data,
        .w_strb, .w_last, .b_valid, .b_ready, .b_resp,
        .m_axi_awid, .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize, .m_axi_awburst, .m_axi_awlock,
        .m_axi_awcache, .m_axi_awprot, .m_axi_awqos, .m_axi_awvalid, .m_axi_awready,
        .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast, .m_axi_wvalid, .m_axi_wready,
        .m_axi_bid, .m_axi_bresp, .m_axi_bvalid, .m_axi_bready,
        .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst, .m_axi_arlock,
        .m_axi_arcache, .m_axi_arprot, .m_axi_arqos, .m_axi_arvalid, .m_axi_arready,
        .m_axi_rid, .m_axi_rdata, .m_axi_rresp, .m_axi_rlast, .m_axi_rvalid, .m_axi_rready);
endmodule

`default_nettype wire
