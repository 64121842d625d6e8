// Stand-in for the Zynq UltraScale+ MPSoC processing system (PG201 v3.x, zynq_ultra_ps_e) as
// fpdeep's ip.tcl configures it: M_AXI_HPM0_FPD (maxigp0) and M_AXI_HPM0_LPD (maxigp2)
// masters, S_AXI_HP0_FPD (saxigp2) and S_AXI_HP1_FPD (saxigp3) slaves, no PL clock or reset
// (PSU__FPGA_PL0_ENABLE 0). Masters: 40-bit address, 16-bit IDs, awuser/aruser 16 bits;
// HP slaves: 49-bit address, 6-bit IDs, 1-bit user, and the FIFO fill-level outputs.
//   `FPDEEP_STUB_MODULE  module name; `FPDEEP_STUB_GP0, _GP2, _GP2S, _GP3S  the data widths
//   (PSU__MAXIGP0__DATA_WIDTH, PSU__MAXIGP2__DATA_WIDTH, PSU__SAXIGP2__..., PSU__SAXIGP3__...)
`include "axi_ports.svh"
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input  wire        maxihpm0_fpd_aclk,
    `FPDEEP_AXI4_PORTS(output, input, maxigp0_, 40, `FPDEEP_STUB_GP0, 16),
    output wire [15:0] maxigp0_awuser,
    output wire [15:0] maxigp0_aruser,
    input  wire        maxihpm0_lpd_aclk,
    `FPDEEP_AXI4_PORTS(output, input, maxigp2_, 40, `FPDEEP_STUB_GP2, 16),
    output wire [15:0] maxigp2_awuser,
    output wire [15:0] maxigp2_aruser,
    input  wire        saxihp0_fpd_aclk,
    `FPDEEP_AXI4_PORTS(input, output, saxigp2_, 49, `FPDEEP_STUB_GP2S, 6),
    input  wire        saxigp2_awuser,
    input  wire        saxigp2_aruser,
    output wire [7:0]  saxigp2_rcount,
    output wire [7:0]  saxigp2_wcount,
    output wire [3:0]  saxigp2_racount,
    output wire [3:0]  saxigp2_wacount,
    input  wire        saxihp1_fpd_aclk,
    `FPDEEP_AXI4_PORTS(input, output, saxigp3_, 49, `FPDEEP_STUB_GP3S, 6),
    input  wire        saxigp3_awuser,
    input  wire        saxigp3_aruser,
    output wire [7:0]  saxigp3_rcount,
    output wire [7:0]  saxigp3_wcount,
    output wire [3:0]  saxigp3_racount,
    output wire [3:0]  saxigp3_wacount
);
    `FPDEEP_AXI4_TIE_MASTER(maxigp0_)
    `FPDEEP_AXI4_TIE_MASTER(maxigp2_)
    `FPDEEP_AXI4_TIE_SLAVE(saxigp2_)
    `FPDEEP_AXI4_TIE_SLAVE(saxigp3_)
    assign maxigp0_awuser = '0;
    assign maxigp0_aruser = '0;
    assign maxigp2_awuser = '0;
    assign maxigp2_aruser = '0;
    assign saxigp2_rcount = '0;
    assign saxigp2_wcount = '0;
    assign saxigp2_racount = '0;
    assign saxigp2_wacount = '0;
    assign saxigp3_rcount = '0;
    assign saxigp3_wcount = '0;
    assign saxigp3_racount = '0;
    assign saxigp3_wacount = '0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
