// Stand-in for the AXI4-Stream Data Width Converter (PG085 v1.1, axis_dwidth_converter) as
// fpdeep's ip.tcl configures it: one clock, tkeep (HAS_TKEEP) and tlast (HAS_TLAST).
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_S_BYTES  S_TDATA_NUM_BYTES,
//   `FPDEEP_STUB_M_BYTES  M_TDATA_NUM_BYTES
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input  wire                              aclk,
    input  wire                              aresetn,
    input  wire                              s_axis_tvalid,
    output wire                              s_axis_tready,
    input  wire [8*`FPDEEP_STUB_S_BYTES-1:0] s_axis_tdata,
    input  wire [`FPDEEP_STUB_S_BYTES-1:0]   s_axis_tkeep,
    input  wire                              s_axis_tlast,
    output wire                              m_axis_tvalid,
    input  wire                              m_axis_tready,
    output wire [8*`FPDEEP_STUB_M_BYTES-1:0] m_axis_tdata,
    output wire [`FPDEEP_STUB_M_BYTES-1:0]   m_axis_tkeep,
    output wire                              m_axis_tlast
);
    assign s_axis_tready = 1'b0;
    assign m_axis_tvalid = 1'b0;
    assign m_axis_tdata = '0;
    assign m_axis_tkeep = '0;
    assign m_axis_tlast = 1'b0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
