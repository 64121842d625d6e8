// AXI4 (ARM IHI 0022) port lists and tie-offs shared by the vendor IP stand-ins, named as
// Xilinx IP names them: <prefix><signal>, e.g. s_axi_awaddr. M is the direction of the
// signals the master drives (output on a master, input on a slave), S of the others.
`ifndef FPDEEP_AXI_PORTS_SVH
`define FPDEEP_AXI_PORTS_SVH

// AXI4-Lite with awprot/arprot and wstrb, 32-bit data.
`define FPDEEP_AXIL_PORTS(M, S, p, AW) \
    M wire [AW-1:0] p``awaddr, M wire [2:0] p``awprot, M wire p``awvalid, S wire p``awready, \
    M wire [31:0] p``wdata, M wire [3:0] p``wstrb, M wire p``wvalid, S wire p``wready, \
    S wire [1:0] p``bresp, S wire p``bvalid, M wire p``bready, \
    M wire [AW-1:0] p``araddr, M wire [2:0] p``arprot, M wire p``arvalid, S wire p``arready, \
    S wire [31:0] p``rdata, S wire [1:0] p``rresp, S wire p``rvalid, M wire p``rready

`define FPDEEP_AXIL_TIE_MASTER(p) \
    assign p``awaddr = '0; assign p``awprot = '0; assign p``awvalid = 1'b0; \
    assign p``wdata = '0; assign p``wstrb = '0; assign p``wvalid = 1'b0; \
    assign p``bready = 1'b0; assign p``araddr = '0; assign p``arprot = '0; \
    assign p``arvalid = 1'b0; assign p``rready = 1'b0;

`define FPDEEP_AXIL_TIE_SLAVE(p) \
    assign p``awready = 1'b0; assign p``wready = 1'b0; assign p``bresp = '0; \
    assign p``bvalid = 1'b0; assign p``arready = 1'b0; assign p``rdata = '0; \
    assign p``rresp = '0; assign p``rvalid = 1'b0;

// AXI4 with IDs (IW bits), lock, qos; both directions.
`define FPDEEP_AXI4_PORTS(M, S, p, AW, DW, IW) \
    M wire [IW-1:0] p``awid, M wire [AW-1:0] p``awaddr, M wire [7:0] p``awlen, \
    M wire [2:0] p``awsize, M wire [1:0] p``awburst, M wire p``awlock, \
    M wire [3:0] p``awcache, M wire [2:0] p``awprot, M wire [3:0] p``awqos, \
    M wire p``awvalid, S wire p``awready, \
    M wire [DW-1:0] p``wdata, M wire [DW/8-1:0] p``wstrb, M wire p``wlast, \
    M wire p``wvalid, S wire p``wready, \
    S wire [IW-1:0] p``bid, S wire [1:0] p``bresp, S wire p``bvalid, M wire p``bready, \
    M wire [IW-1:0] p``arid, M wire [AW-1:0] p``araddr, M wire [7:0] p``arlen, \
    M wire [2:0] p``arsize, M wire [1:0] p``arburst, M wire p``arlock, \
    M wire [3:0] p``arcache, M wire [2:0] p``arprot, M wire [3:0] p``arqos, \
    M wire p``arvalid, S wire p``arready, \
    S wire [IW-1:0] p``rid, S wire [DW-1:0] p``rdata, S wire [1:0] p``rresp, \
    S wire p``rlast, S wire p``rvalid, M wire p``rready

`define FPDEEP_AXI4_TIE_MASTER(p) \
    assign p``awid = '0; assign p``awaddr = '0; assign p``awlen = '0; assign p``awsize = '0; \
    assign p``awburst = '0; assign p``awlock = 1'b0; assign p``awcache = '0; \
    assign p``awprot = '0; assign p``awqos = '0; assign p``awvalid = 1'b0; \
    assign p``wdata = '0; assign p``wstrb = '0; assign p``wlast = 1'b0; \
    assign p``wvalid = 1'b0; assign p``bready = 1'b0; \
    assign p``arid = '0; assign p``araddr = '0; assign p``arlen = '0; assign p``arsize = '0; \
    assign p``arburst = '0; assign p``arlock = 1'b0; assign p``arcache = '0; \
    assign p``arprot = '0; assign p``arqos = '0; assign p``arvalid = 1'b0; \
    assign p``rready = 1'b0;

`define FPDEEP_AXI4_TIE_SLAVE(p) \
    assign p``awready = 1'b0; assign p``wready = 1'b0; assign p``bid = '0; \
    assign p``bresp = '0; assign p``bvalid = 1'b0; assign p``arready = 1'b0; \
    assign p``rid = '0; assign p``rdata = '0; assign p``rresp = '0; assign p``rlast = 1'b0; \
    assign p``rvalid = 1'b0;

`endif
