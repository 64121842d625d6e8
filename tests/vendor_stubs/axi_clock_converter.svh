// Stand-in for the AXI Clock Converter (PG059 v2.1, axi_clock_converter) as fpdeep's ip.tcl
// configures it: PROTOCOL AXI4LITE, 32-bit data, asynchronous clocks (ACLK_ASYNC 1).
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_ADDR  ADDR_WIDTH
`include "axi_ports.svh"
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input wire s_axi_aclk,
    input wire s_axi_aresetn,
    input wire m_axi_aclk,
    input wire m_axi_aresetn,
    `FPDEEP_AXIL_PORTS(input, output, s_axi_, `FPDEEP_STUB_ADDR),
    `FPDEEP_AXIL_PORTS(output, input, m_axi_, `FPDEEP_STUB_ADDR)
);
    `FPDEEP_AXIL_TIE_SLAVE(s_axi_)
    `FPDEEP_AXIL_TIE_MASTER(m_axi_)
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
