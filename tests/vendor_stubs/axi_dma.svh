// Stand-in for the AXI DMA (PG021 v7.1, axi_dma) as fpdeep's ip.tcl configures it: direct
// register mode (c_include_sg 0, so no scatter-gather port), both channels. Its AXI4-Lite
// slave has a 10-bit address and neither wstrb nor prot; its AXI4 masters have no IDs and
// no lock; aruser/awuser are 4 bits.
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_ADDR  c_addr_width,
//   `FPDEEP_STUB_MM2S / `FPDEEP_STUB_S2MM  the memory-map data widths,
//   `FPDEEP_STUB_MM2S_AXIS / `FPDEEP_STUB_S2MM_AXIS  the stream widths
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input  wire                                s_axi_lite_aclk,
    input  wire                                m_axi_mm2s_aclk,
    input  wire                                m_axi_s2mm_aclk,
    input  wire                                axi_resetn,
    // control registers
    input  wire                                s_axi_lite_awvalid,
    output wire                                s_axi_lite_awready,
    input  wire [9:0]                          s_axi_lite_awaddr,
    input  wire                                s_axi_lite_wvalid,
    output wire                                s_axi_lite_wready,
    input  wire [31:0]                         s_axi_lite_wdata,
    output wire [1:0]                          s_axi_lite_bresp,
    output wire                                s_axi_lite_bvalid,
    input  wire                                s_axi_lite_bready,
    input  wire                                s_axi_lite_arvalid,
    output wire                                s_axi_lite_arready,
    input  wire [9:0]                          s_axi_lite_araddr,
    output wire                                s_axi_lite_rvalid,
    input  wire                                s_axi_lite_rready,
    output wire [31:0]                         s_axi_lite_rdata,
    output wire [1:0]                          s_axi_lite_rresp,
    // memory to stream: reads memory
    output wire [`FPDEEP_STUB_ADDR-1:0]        m_axi_mm2s_araddr,
    output wire [7:0]                          m_axi_mm2s_arlen,
    output wire [2:0]                          m_axi_mm2s_arsize,
    output wire [1:0]                          m_axi_mm2s_arburst,
    output wire [2:0]                          m_axi_mm2s_arprot,
    output wire [3:0]                          m_axi_mm2s_arcache,
    output wire [3:0]                          m_axi_mm2s_aruser,
    output wire                                m_axi_mm2s_arvalid,
    input  wire                                m_axi_mm2s_arready,
    input  wire [`FPDEEP_STUB_MM2S-1:0]        m_axi_mm2s_rdata,
    input  wire [1:0]                          m_axi_mm2s_rresp,
    input  wire                                m_axi_mm2s_rlast,
    input  wire                                m_axi_mm2s_rvalid,
    output wire                                m_axi_mm2s_rready,
    output wire [`FPDEEP_STUB_MM2S_AXIS-1:0]   m_axis_mm2s_tdata,
    output wire [`FPDEEP_STUB_MM2S_AXIS/8-1:0] m_axis_mm2s_tkeep,
    output wire                                m_axis_mm2s_tvalid,
    input  wire                                m_axis_mm2s_tready,
    output wire                                m_axis_mm2s_tlast,
    // stream to memory: writes memory
    output wire [`FPDEEP_STUB_ADDR-1:0]        m_axi_s2mm_awaddr,
    output wire [7:0]                          m_axi_s2mm_awlen,
    output wire [2:0]                          m_axi_s2mm_awsize,
    output wire [1:0]                          m_axi_s2mm_awburst,
    output wire [2:0]                          m_axi_s2mm_awprot,
    output wire [3:0]                          m_axi_s2mm_awcache,
    output wire [3:0]                          m_axi_s2mm_awuser,
    output wire                                m_axi_s2mm_awvalid,
    input  wire                                m_axi_s2mm_awready,
    output wire [`FPDEEP_STUB_S2MM-1:0]        m_axi_s2mm_wdata,
    output wire [`FPDEEP_STUB_S2MM/8-1:0]      m_axi_s2mm_wstrb,
    output wire                                m_axi_s2mm_wlast,
    output wire                                m_axi_s2mm_wvalid,
    input  wire                                m_axi_s2mm_wready,
    input  wire [1:0]                          m_axi_s2mm_bresp,
    input  wire                                m_axi_s2mm_bvalid,
    output wire                                m_axi_s2mm_bready,
    input  wire [`FPDEEP_STUB_S2MM_AXIS-1:0]   s_axis_s2mm_tdata,
    input  wire [`FPDEEP_STUB_S2MM_AXIS/8-1:0] s_axis_s2mm_tkeep,
    input  wire                                s_axis_s2mm_tvalid,
    output wire                                s_axis_s2mm_tready,
    input  wire                                s_axis_s2mm_tlast,
    // status
    output wire                                mm2s_prmry_reset_out_n,
    output wire                                s2mm_prmry_reset_out_n,
    output wire                                mm2s_introut,
    output wire                                s2mm_introut
);
    assign s_axi_lite_awready = 1'b0;
    assign s_axi_lite_wready = 1'b0;
    assign s_axi_lite_bresp = '0;
    assign s_axi_lite_bvalid = 1'b0;
    assign s_axi_lite_arready = 1'b0;
    assign s_axi_lite_rvalid = 1'b0;
    assign s_axi_lite_rdata = '0;
    assign s_axi_lite_rresp = '0;
    assign m_axi_mm2s_araddr = '0;
    assign m_axi_mm2s_arlen = '0;
    assign m_axi_mm2s_arsize = '0;
    assign m_axi_mm2s_arburst = '0;
    assign m_axi_mm2s_arprot = '0;
    assign m_axi_mm2s_arcache = '0;
    assign m_axi_mm2s_aruser = '0;
    assign m_axi_mm2s_arvalid = 1'b0;
    assign m_axi_mm2s_rready = 1'b0;
    assign m_axis_mm2s_tdata = '0;
    assign m_axis_mm2s_tkeep = '0;
    assign m_axis_mm2s_tvalid = 1'b0;
    assign m_axis_mm2s_tlast = 1'b0;
    assign m_axi_s2mm_awaddr = '0;
    assign m_axi_s2mm_awlen = '0;
    assign m_axi_s2mm_awsize = '0;
    assign m_axi_s2mm_awburst = '0;
    assign m_axi_s2mm_awprot = '0;
    assign m_axi_s2mm_awcache = '0;
    assign m_axi_s2mm_awuser = '0;
    assign m_axi_s2mm_awvalid = 1'b0;
    assign m_axi_s2mm_wdata = '0;
    assign m_axi_s2mm_wstrb = '0;
    assign m_axi_s2mm_wlast = 1'b0;
    assign m_axi_s2mm_wvalid = 1'b0;
    assign m_axi_s2mm_bready = 1'b0;
    assign s_axis_s2mm_tready = 1'b0;
    assign mm2s_prmry_reset_out_n = 1'b0;
    assign s2mm_prmry_reset_out_n = 1'b0;
    assign mm2s_introut = 1'b0;
    assign s2mm_introut = 1'b0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
