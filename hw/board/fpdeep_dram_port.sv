// NR off-chip read clients (fpdeep_dram_rd) and NW write clients (fpdeep_dram_wr) on one AXI4
// master. Read client k asks with ARID = k and gets the R beats whose RID is k; write client k
// writes with AWID = k and gets the B responses whose BID is k, so the memory may answer the
// clients in any order. Read addresses go round robin among the clients that ask; write
// addresses too, one burst a grant, and the W beats follow in the order of the granted AWs:
// a client buffers a burst's beats before it asks, so they pass every cycle and bursts of
// different clients follow back to back. The AR, AW, W and R channels pass through skid
// buffers (both valid and ready registered) without losing a cycle. Bursts are INCR of whole
// DW-bit beats; cache is 4'b0011 (normal, bufferable), the other attributes zero.
// IDW must be at least clog2(max(NR, NW)).
`default_nettype none

module fpdeep_dram_port #(
    parameter int NR = 1,
    parameter int NW = 1,
    parameter int DW = 64,       // AXI data bits
    parameter int AWD = 64,      // AXI address bits
    parameter int IDW = 1        // AXI ID bits
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    // read clients
    input  wire logic [NR-1:0]        ar_valid,
    output logic      [NR-1:0]        ar_ready,
    input  wire logic [NR*AWD-1:0]    ar_addr,
    input  wire logic [NR*8-1:0]      ar_len,
    output logic      [NR-1:0]        r_valid,
    input  wire logic [NR-1:0]        r_ready,
    output logic      [NR*DW-1:0]     r_data,
    output logic      [NR*2-1:0]      r_resp,
    output logic      [NR-1:0]        r_last,
    // write clients
    input  wire logic [NW-1:0]        aw_valid,
    output logic      [NW-1:0]        aw_ready,
    input  wire logic [NW*AWD-1:0]    aw_addr,
    input  wire logic [NW*8-1:0]      aw_len,
    input  wire logic [NW-1:0]        w_valid,
    output logic      [NW-1:0]        w_ready,
    input  wire logic [NW*DW-1:0]     w_data,
    input  wire logic [NW*DW/8-1:0]   w_strb,
    input  wire logic [NW-1:0]        w_last,
    output logic      [NW-1:0]        b_valid,
    input  wire logic [NW-1:0]        b_ready,
    output logic      [NW*2-1:0]      b_resp,
    // the AXI4 master
    output logic      [IDW-1:0]       m_axi_awid,
    output logic      [AWD-1:0]       m_axi_awaddr,
    output logic      [7:0]           m_axi_awlen,
    output logic      [2:0]           m_axi_awsize,
    output logic      [1:0]           m_axi_awburst,
    output logic                      m_axi_awlock,
    output logic      [3:0]           m_axi_awcache,
    output logic      [2:0]           m_axi_awprot,
    output logic      [3:0]           m_axi_awqos,
    output logic                      m_axi_awvalid,
    input  wire logic                 m_axi_awready,
    output logic      [DW-1:0]        m_axi_wdata,
    output logic      [DW/8-1:0]      m_axi_wstrb,
    output logic                      m_axi_wlast,
    output logic                      m_axi_wvalid,
    input  wire logic                 m_axi_wready,
    input  wire logic [IDW-1:0]       m_axi_bid,
    input  wire logic [1:0]           m_axi_bresp,
    input  wire logic                 m_axi_bvalid,
    output logic                      m_axi_bready,
    output logic      [IDW-1:0]       m_axi_arid,
    output logic      [AWD-1:0]       m_axi_araddr,
    output logic      [7:0]           m_axi_arlen,
    output logic      [2:0]           m_axi_arsize,
    output logic      [1:0]           m_axi_arburst,
    output logic                      m_axi_arlock,
    output logic      [3:0]           m_axi_arcache,
    output logic      [2:0]           m_axi_arprot,
    output logic      [3:0]           m_axi_arqos,
    output logic                      m_axi_arvalid,
    input  wire logic                 m_axi_arready,
    input  wire logic [IDW-1:0]       m_axi_rid,
    input  wire logic [DW-1:0]        m_axi_rdata,
    input  wire logic [1:0]           m_axi_rresp,
    input  wire logic                 m_axi_rlast,
    input  wire logic                 m_axi_rvalid,
    output logic                      m_axi_rready
);
    localparam int RB = (NR > 1) ? $clog2(NR) : 1;
    localparam int WB = (NW > 1) ? $clog2(NW) : 1;
    localparam int OD = 4;       // granted write bursts whose W beats have not all passed
    localparam logic [2:0] SIZE = 3'($clog2(DW / 8));

    assign m_axi_awsize = SIZE;
    assign m_axi_awburst = 2'b01;
    assign m_axi_awlock = 1'b0;
    assign m_axi_awcache = 4'b0011;
    assign m_axi_awprot = 3'b000;
    assign m_axi_awqos = 4'b0000;
    assign m_axi_arsize = SIZE;
    assign m_axi_arburst = 2'b01;
    assign m_axi_arlock = 1'b0;
    assign m_axi_arcache = 4'b0011;
    assign m_axi_arprot = 3'b000;
    assign m_axi_arqos = 4'b0000;

    // ---- read addresses: round robin into a skid buffer -------------------------------------
    logic [RB-1:0] ar_ptr, ar_pick;
    logic          ar_any, ar_space, ar_unused_last;

    always_comb begin
        ar_any = 1'b0;
        ar_pick = '0;
        for (int k = 0; k < NR; k++) begin
            int c;
            c = int'(ar_ptr) + k;
            if (c >= NR) c = c - NR;
            if (!ar_any && ar_valid[c]) begin
                ar_any = 1'b1;
                ar_pick = RB'(c);
            end
        end
        ar_ready = '0;
        ar_ready[ar_pick] = ar_any && ar_space;
    end

    fpdeep_skid_buffer #(.WIDTH(IDW + AWD + 8)) u_ar (
        .clk, .rst,
        .s_data({IDW'(ar_pick), ar_addr[int'(ar_pick)*AWD +: AWD], ar_len[int'(ar_pick)*8 +: 8]}),
        .s_last(1'b0), .s_valid(ar_any), .s_ready(ar_space),
        .m_data({m_axi_arid, m_axi_araddr, m_axi_arlen}), .m_last(ar_unused_last),
        .m_valid(m_axi_arvalid), .m_ready(m_axi_arready)
    );

    // ---- read data: to the client its ID names ----------------------------------------------
    logic [IDW-1:0] r_id;
    logic [DW-1:0]  r_q;
    logic [1:0]     r_qresp;
    logic           r_qlast, r_qvalid, r_take;

    fpdeep_skid_buffer #(.WIDTH(IDW + DW + 2)) u_r (
        .clk, .rst,
        .s_data({m_axi_rid, m_axi_rdata, m_axi_rresp}), .s_last(m_axi_rlast),
        .s_valid(m_axi_rvalid), .s_ready(m_axi_rready),
        .m_data({r_id, r_q, r_qresp}), .m_last(r_qlast), .m_valid(r_qvalid), .m_ready(r_take)
    );

    always_comb begin
        r_valid = '0;
        r_take = r_qvalid;   // a beat for no client is dropped
        for (int k = 0; k < NR; k++) begin
            r_data[k*DW +: DW] = r_q;
            r_resp[k*2 +: 2] = r_qresp;
            r_last[k] = r_qlast;
            if (int'(r_id) == k) begin
                r_valid[k] = r_qvalid;
                r_take = r_qvalid && r_ready[k];
            end
        end
    end

    // ---- write addresses: round robin, one burst a grant, its client noted for the W beats --
    logic [WB-1:0] aw_ptr, aw_pick, w_who;
    logic          aw_any, aw_space, aw_unused_last, o_space, o_valid, o_unused_last;
    logic [$clog2(OD+1)-1:0] o_count;

    always_comb begin
        aw_any = 1'b0;
        aw_pick = '0;
        for (int k = 0; k < NW; k++) begin
            int c;
            c = int'(aw_ptr) + k;
            if (c >= NW) c = c - NW;
            if (!aw_any && aw_valid[c]) begin
                aw_any = 1'b1;
                aw_pick = WB'(c);
            end
        end
        aw_ready = '0;
        aw_ready[aw_pick] = aw_any && aw_space && o_space;
    end
    wire logic aw_grant = aw_any && aw_space && o_space;

    fpdeep_skid_buffer #(.WIDTH(IDW + AWD + 8)) u_aw (
        .clk, .rst,
        .s_data({IDW'(aw_pick), aw_addr[int'(aw_pick)*AWD +: AWD], aw_len[int'(aw_pick)*8 +: 8]}),
        .s_last(1'b0), .s_valid(aw_any && o_space), .s_ready(aw_space),
        .m_data({m_axi_awid, m_axi_awaddr, m_axi_awlen}), .m_last(aw_unused_last),
        .m_valid(m_axi_awvalid), .m_ready(m_axi_awready)
    );

    // ---- write data: the beats of the granted bursts, in grant order ------------------------
    logic w_space;
    wire logic w_in = o_valid && w_valid[w_who];
    wire logic w_end = w_in && w_space && w_last[w_who];

    fpdeep_stream_fifo #(.WIDTH(WB), .DEPTH(OD)) u_order (
        .clk, .rst,
        .s_data(aw_pick), .s_last(1'b0), .s_valid(aw_grant), .s_ready(o_space),
        .m_data(w_who), .m_last(o_unused_last), .m_valid(o_valid), .m_ready(w_end),
        .count(o_count)
    );

    always_comb begin
        w_ready = '0;
        w_ready[w_who] = o_valid && w_space;
    end

    fpdeep_skid_buffer #(.WIDTH(DW + DW / 8)) u_w (
        .clk, .rst,
        .s_data({w_data[int'(w_who)*DW +: DW], w_strb[int'(w_who)*(DW/8) +: DW/8]}),
        .s_last(w_last[w_who]), .s_valid(w_in), .s_ready(w_space),
        .m_data({m_axi_wdata, m_axi_wstrb}), .m_last(m_axi_wlast), .m_valid(m_axi_wvalid),
        .m_ready(m_axi_wready)
    );

    // ---- write responses: to the client its ID names ---------------------------------------
    always_comb begin
        b_valid = '0;
        m_axi_bready = 1'b1;  // a response for no client is dropped
        for (int k = 0; k < NW; k++) begin
            b_resp[k*2 +: 2] = m_axi_bresp;
            if (int'(m_axi_bid) == k) begin
                b_valid[k] = m_axi_bvalid;
                m_axi_bready = b_ready[k];
            end
        end
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            ar_ptr <= '0;
            aw_ptr <= '0;
        end else begin
            if (ar_any && ar_space) ar_ptr <= (int'(ar_pick) == NR - 1) ? '0 : ar_pick + 1'b1;
            if (aw_grant) aw_ptr <= (int'(aw_pick) == NW - 1) ? '0 : aw_pick + 1'b1;
        end
    end

    wire logic unused = ar_unused_last || aw_unused_last || o_unused_last || (|o_count);
endmodule

`default_nettype wire
