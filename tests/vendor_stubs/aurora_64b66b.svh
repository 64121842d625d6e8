// Stand-in for the Aurora 64B/66B core (PG074 v12.0) as fpdeep's ip.tcl configures it:
// framing user interface (interface_mode Framing) without flow control (flow_mode None, so
// the receive side has no tready), shared logic in the core (SupportLevel 1), no DRP
// (drp_mode Disabled), GT reference clock on gt_refclk1. Ports of PG074's port tables for
// that configuration; the shared-logic clock and QPLL outputs for other cores are left out.
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_LANES  C_AURORA_LANES
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    // transmit user interface (AXI4-Stream slave), 64 bits per lane
    input  wire [64*`FPDEEP_STUB_LANES-1:0] s_axi_tx_tdata,
    input  wire [8*`FPDEEP_STUB_LANES-1:0]  s_axi_tx_tkeep,
    input  wire                             s_axi_tx_tlast,
    input  wire                             s_axi_tx_tvalid,
    output wire                             s_axi_tx_tready,
    // receive user interface (AXI4-Stream master, no tready)
    output wire [64*`FPDEEP_STUB_LANES-1:0] m_axi_rx_tdata,
    output wire [8*`FPDEEP_STUB_LANES-1:0]  m_axi_rx_tkeep,
    output wire                             m_axi_rx_tlast,
    output wire                             m_axi_rx_tvalid,
    // serial lanes
    input  wire [`FPDEEP_STUB_LANES-1:0]    rxp,
    input  wire [`FPDEEP_STUB_LANES-1:0]    rxn,
    output wire [`FPDEEP_STUB_LANES-1:0]    txp,
    output wire [`FPDEEP_STUB_LANES-1:0]    txn,
    // clocks and resets
    input  wire                             gt_refclk1_p,
    input  wire                             gt_refclk1_n,
    input  wire                             init_clk,
    input  wire                             reset_pb,
    input  wire                             pma_init,
    input  wire                             power_down,
    input  wire [2:0]                       loopback,
    input  wire                             gt_rxcdrovrden_in,
    output wire                             user_clk_out,
    output wire                             sys_reset_out,
    output wire                             gt_reset_out,
    // status
    output wire                             channel_up,
    output wire [`FPDEEP_STUB_LANES-1:0]    lane_up,
    output wire                             hard_err,
    output wire                             soft_err,
    output wire                             gt_pll_lock,
    output wire                             mmcm_not_locked_out,
    output wire                             link_reset_out
);
    assign s_axi_tx_tready = 1'b0;
    assign m_axi_rx_tdata = '0;
    assign m_axi_rx_tkeep = '0;
    assign m_axi_rx_tlast = 1'b0;
    assign m_axi_rx_tvalid = 1'b0;
    assign txp = '0;
    assign txn = '0;
    assign user_clk_out = 1'b0;
    assign sys_reset_out = 1'b1;
    assign gt_reset_out = 1'b1;
    assign channel_up = 1'b0;
    assign lane_up = '0;
    assign hard_err = 1'b0;
    assign soft_err = 1'b0;
    assign gt_pll_lock = 1'b0;
    assign mmcm_not_locked_out = 1'b1;
    assign link_reset_out = 1'b0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
