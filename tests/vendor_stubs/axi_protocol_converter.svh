// Stand-in for the AXI Protocol Converter (PG101 v2.1, axi_protocol_converter) as fpdeep's
// ip.tcl configures it: SI_PROTOCOL AXI4 (with IDs, region and qos, no user signals) to
// MI_PROTOCOL AXI4LITE, 32-bit data.
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_ADDR  ADDR_WIDTH, `FPDEEP_STUB_ID  ID_WIDTH
`include "axi_ports.svh"
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input wire aclk,
    input wire aresetn,
    `FPDEEP_AXI4_PORTS(input, output, s_axi_, `FPDEEP_STUB_ADDR, 32, `FPDEEP_STUB_ID),
    input wire [3:0] s_axi_awregion,
    input wire [3:0] s_axi_arregion,
    `FPDEEP_AXIL_PORTS(output, input, m_axi_, `FPDEEP_STUB_ADDR)
);
    `FPDEEP_AXI4_TIE_SLAVE(s_axi_)
    `FPDEEP_AXIL_TIE_MASTER(m_axi_)
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
