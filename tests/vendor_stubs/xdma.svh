// Stand-in for the DMA/Bridge Subsystem for PCI Express (PG195 v4.1, xdma) as fpdeep's
// ip.tcl configures it on UltraScale+: functional_mode DMA with AXI4-Stream user interface
// (one H2C and one C2H channel, suffix _0), the AXI4-Lite master (axilite_master_en), one
// user interrupt; sys_clk from the reference buffer's ODIV2 and sys_clk_gt from its O.
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_LANES  lanes (pl_link_cap_max_link_width),
//   `FPDEEP_STUB_DATA  axi_data_width in bits
`include "axi_ports.svh"
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input  wire                           sys_clk,
    input  wire                           sys_clk_gt,
    input  wire                           sys_rst_n,
    input  wire [`FPDEEP_STUB_LANES-1:0]  pci_exp_rxp,
    input  wire [`FPDEEP_STUB_LANES-1:0]  pci_exp_rxn,
    output wire [`FPDEEP_STUB_LANES-1:0]  pci_exp_txp,
    output wire [`FPDEEP_STUB_LANES-1:0]  pci_exp_txn,
    output wire                           user_lnk_up,
    output wire                           axi_aclk,
    output wire                           axi_aresetn,
    input  wire [0:0]                     usr_irq_req,
    output wire [0:0]                     usr_irq_ack,
    output wire                           msi_enable,
    output wire [2:0]                     msi_vector_width,
    // card to host
    input  wire [`FPDEEP_STUB_DATA-1:0]   s_axis_c2h_tdata_0,
    input  wire [`FPDEEP_STUB_DATA/8-1:0] s_axis_c2h_tkeep_0,
    input  wire                           s_axis_c2h_tlast_0,
    input  wire                           s_axis_c2h_tvalid_0,
    output wire                           s_axis_c2h_tready_0,
    // host to card
    output wire [`FPDEEP_STUB_DATA-1:0]   m_axis_h2c_tdata_0,
    output wire [`FPDEEP_STUB_DATA/8-1:0] m_axis_h2c_tkeep_0,
    output wire                           m_axis_h2c_tlast_0,
    output wire                           m_axis_h2c_tvalid_0,
    input  wire                           m_axis_h2c_tready_0,
    `FPDEEP_AXIL_PORTS(output, input, m_axil_, 32)
);
    assign pci_exp_txp = '0;
    assign pci_exp_txn = '0;
    assign user_lnk_up = 1'b0;
    assign axi_aclk = 1'b0;
    assign axi_aresetn = 1'b0;
    assign usr_irq_ack = '0;
    assign msi_enable = 1'b0;
    assign msi_vector_width = '0;
    assign s_axis_c2h_tready_0 = 1'b0;
    assign m_axis_h2c_tdata_0 = '0;
    assign m_axis_h2c_tkeep_0 = '0;
    assign m_axis_h2c_tlast_0 = 1'b0;
    assign m_axis_h2c_tvalid_0 = 1'b0;
    `FPDEEP_AXIL_TIE_MASTER(m_axil_)
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
