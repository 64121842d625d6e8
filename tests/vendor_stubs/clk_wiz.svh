// Stand-in for the Clocking Wizard (PG065 v6.0, UltraScale+ MMCM) as fpdeep's ip.tcl
// configures it: differential clk_in1 (PRIM_SOURCE Differential_clock_capable_pin),
// clk_out1 and clk_out2 (CLKOUT2_USED), an active-high reset (USE_RESET, RESET_TYPE
// ACTIVE_HIGH) and locked (USE_LOCKED). Ports only: it makes no clock.
//   `FPDEEP_STUB_MODULE  the module name create_ip gives it
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input  wire clk_in1_p,
    input  wire clk_in1_n,
    input  wire reset,
    output wire clk_out1,
    output wire clk_out2,
    output wire locked
);
    assign clk_out1 = 1'b0;
    assign clk_out2 = 1'b0;
    assign locked = 1'b0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
