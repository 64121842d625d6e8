// Stand-in for the UltraScale+ GT reference clock buffer primitive IBUFDS_GTE4 (UG576 v1.7,
// "Reference Clock Input Structure"; UG974 lists its ports): I/IB the pad pair, CEB the
// active-low enable, O the clock to the GT, ODIV2 the copy for fabric (through a BUFG_GT).
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
module IBUFDS_GTE4 (
    input  wire I,
    input  wire IB,
    input  wire CEB,
    output wire O,
    output wire ODIV2
);
    assign O = 1'b0;
    assign ODIV2 = 1'b0;
endmodule
/* verilator lint_on UNUSEDSIGNAL */
