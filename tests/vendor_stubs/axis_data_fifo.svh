// Stand-in for the AXI4-Stream Data FIFO (PG085 v2.0, axis_data_fifo) as fpdeep's ip.tcl
// configures it: tkeep when HAS_TKEEP, tlast (HAS_TLAST), a separate m_axis_aclk when
// IS_ACLK_ASYNC; no data-count or almost-full outputs (not enabled).
//   `FPDEEP_STUB_MODULE  module name, `FPDEEP_STUB_BYTES  TDATA_NUM_BYTES,
//   `FPDEEP_STUB_KEEP    defined when HAS_TKEEP=1, `FPDEEP_STUB_ASYNC  defined when IS_ACLK_ASYNC=1
/* verilator lint_off UNUSEDSIGNAL */ // a stand-in reads none of its inputs
/* verilator lint_off DECLFILENAME */ // the test includes every stand-in into one file, each under its create_ip name
module `FPDEEP_STUB_MODULE (
    input  wire                          s_axis_aresetn,
    input  wire                          s_axis_aclk,
`ifdef FPDEEP_STUB_ASYNC
    input  wire                          m_axis_aclk,
`endif
    input  wire                          s_axis_tvalid,
    output wire                          s_axis_tready,
    input  wire [8*`FPDEEP_STUB_BYTES-1:0] s_axis_tdata,
`ifdef FPDEEP_STUB_KEEP
    input  wire [`FPDEEP_STUB_BYTES-1:0] s_axis_tkeep,
    output wire [`FPDEEP_STUB_BYTES-1:0] m_axis_tkeep,
`endif
    input  wire                          s_axis_tlast,
    output wire                          m_axis_tvalid,
    input  wire                          m_axis_tready,
    output wire [8*`FPDEEP_STUB_BYTES-1:0] m_axis_tdata,
    output wire                          m_axis_tlast
);
    assign s_axis_tready = 1'b0;
`ifdef FPDEEP_STUB_KEEP
    assign m_axis_tkeep = '0;
`endif
    assign m_axis_tvalid = 1'b0;
    assign m_axis_tdata = '0;
    assign m_axis_tlast = 1'b0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
