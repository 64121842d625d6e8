// fpdeep off-chip memory model, SIMULATION ONLY: an AXI4 slave holding BYTES bytes, with the
// board file's latency and bandwidth. A burst is answered in the order its request came, its
// first read beat (or its write response, after its last data beat) LATENCY cycles after its
// request (its last data beat) was taken, so requests in flight overlap their latencies as a
// memory controller's queue does. Read and write beats share the memory's bandwidth: NUM
// beats per DEN cycles (a token bucket holding one beat), taken in turn when both wait. A
// burst beyond BYTES is answered with DECERR and writes nothing. Bursts are INCR of full beats.
`default_nettype none

module fpdeep_mem_model #(
    parameter int DW = 64,
    parameter int IDW = 1,
    parameter int AWD = 64,
    parameter longint BYTES = 4096,
    parameter int LATENCY = 25,
    parameter int NUM = 1,
    parameter int DEN = 1,
    parameter int QD = 16            // requests each direction keeps in flight
) (
    input  wire logic             clk,
    input  wire logic             rst,
    input  wire logic [IDW-1:0]   s_axi_awid,
    input  wire logic [AWD-1:0]   s_axi_awaddr,
    input  wire logic [7:0]       s_axi_awlen,
    input  wire logic [2:0]       s_axi_awsize,
    input  wire logic [1:0]       s_axi_awburst,
    input  wire logic             s_axi_awlock,
    input  wire logic [3:0]       s_axi_awcache,
    input  wire logic [2:0]       s_axi_awprot,
    input  wire logic [3:0]       s_axi_awqos,
    input  wire logic             s_axi_awvalid,
    output logic                  s_axi_awready,
    input  wire logic [DW-1:0]    s_axi_wdata,
    input  wire logic [DW/8-1:0]  s_axi_wstrb,
    input  wire logic             s_axi_wlast,
    input  wire logic             s_axi_wvalid,
    output logic                  s_axi_wready,
    output logic      [IDW-1:0]   s_axi_bid,
    output logic      [1:0]       s_axi_bresp,
    output logic                  s_axi_bvalid,
    input  wire logic             s_axi_bready,
    input  wire logic [IDW-1:0]   s_axi_arid,
    input  wire logic [AWD-1:0]   s_axi_araddr,
    input  wire logic [7:0]       s_axi_arlen,
    input  wire logic [2:0]       s_axi_arsize,
    input  wire logic [1:0]       s_axi_arburst,
    input  wire logic             s_axi_arlock,
    input  wire logic [3:0]       s_axi_arcache,
    input  wire logic [2:0]       s_axi_arprot,
    input  wire logic [3:0]       s_axi_arqos,
    input  wire logic             s_axi_arvalid,
    output logic                  s_axi_arready,
    output logic      [IDW-1:0]   s_axi_rid,
    output logic      [DW-1:0]    s_axi_rdata,
    output logic      [1:0]       s_axi_rresp,
    output logic                  s_axi_rlast,
    output logic                  s_axi_rvalid,
    input  wire logic             s_axi_rready
);
    localparam int NB = DW / 8;
    localparam longint BEATS = (BYTES + 64'(NB) - 1) / 64'(NB);
    localparam int QB = $clog2(QD);
    localparam logic [1:0] OKAY = 2'b00, DECERR = 2'b11;


    // sparse: only the beats written take simulator memory (a beat never written reads 0)
    logic [DW-1:0] mem [longint unsigned];
    logic [63:0] now;

    // a request: its ID, first beat, beats and the cycle it may be answered from
    typedef struct packed {
        logic [IDW-1:0] id;
        logic [63:0]    beat;
        logic [8:0]     beats;
        logic [63:0]    due;
    } req_t;

    req_t rq [QD];
    req_t wq [QD];
    req_t bq [QD];
    logic [QB:0] r_head, r_tail, w_head, w_tail, b_head, b_tail;
    logic [8:0] r_done, w_done;  // beats of the head burst moved

    wire logic r_empty = r_head == r_tail;
    wire logic w_empty = w_head == w_tail;
    wire logic b_empty = b_head == b_tail;
    wire logic r_full = (r_tail - r_head) == (QB+1)'(QD);
    wire logic w_full = (w_tail - w_head) == (QB+1)'(QD);
    wire logic b_full = (b_tail - b_head) == (QB+1)'(QD);

    function automatic logic in_range(input logic [63:0] beat, input logic [8:0] beats);
        return beat + 64'(beats) <= 64'(BEATS);
    endfunction

    // the bandwidth: a beat may move when the bucket holds DEN
    logic [31:0] tokens;
    wire logic have_token = tokens >= 32'(DEN);
    req_t r_cur, w_cur;
    assign r_cur = rq[r_head[QB-1:0]];
    assign w_cur = wq[w_head[QB-1:0]];
    wire logic r_ok = in_range(r_cur.beat, r_cur.beats);
    wire logic w_ok = in_range(w_cur.beat, w_cur.beats);
    wire logic unused = &{1'b0, s_axi_awsize, s_axi_awburst, s_axi_awlock, s_axi_awcache,
                          s_axi_awprot, s_axi_awqos, s_axi_arsize, s_axi_arburst, s_axi_arlock,
                          s_axi_arcache, s_axi_arprot, s_axi_arqos, s_axi_wlast, w_cur.due};

    assign s_axi_arready = !r_full;
    assign s_axi_awready = !w_full;
    // reads and writes take turns at the bandwidth when both wait; a read beat offered stays
    // offered until taken
    logic w_turn, r_hold;
    wire logic w_waits = !w_empty && s_axi_wvalid && !b_full;
    wire logic r_due = !r_empty && now >= r_cur.due;
    assign s_axi_rvalid = r_hold || (r_due && have_token && !(w_turn && w_waits));
    assign s_axi_rid = r_cur.id;
    assign s_axi_rresp = r_ok ? OKAY : DECERR;
    assign s_axi_rlast = r_done == r_cur.beats - 1'b1;
    wire logic [63:0] r_at = r_cur.beat + 64'(r_done);
    wire logic [63:0] w_at = w_cur.beat + 64'(w_done);
    assign s_axi_rdata = (r_ok && mem.exists(r_at)) ? mem[r_at] : '0;
    wire logic r_move = s_axi_rvalid && s_axi_rready;
    // a write beat takes what a read beat leaves of the bandwidth, and room for its response
    assign s_axi_wready = !w_empty && have_token && !b_full && !s_axi_rvalid;
    wire logic w_move = s_axi_wvalid && s_axi_wready;
    wire logic w_final = w_done == w_cur.beats - 1'b1;

    assign s_axi_bvalid = !b_empty && now >= bq[b_head[QB-1:0]].due;
    assign s_axi_bid = bq[b_head[QB-1:0]].id;
    assign s_axi_bresp = bq[b_head[QB-1:0]].beat[0] ? DECERR : OKAY;

    always_ff @(posedge clk) begin
        if (rst) begin
            now <= '0;
            w_turn <= 1'b0;
            r_hold <= 1'b0;
            tokens <= 32'(DEN);
            r_head <= '0;
            r_tail <= '0;
            w_head <= '0;
            w_tail <= '0;
            b_head <= '0;
            b_tail <= '0;
            r_done <= '0;
            w_done <= '0;
        end else begin
            now <= now + 1'b1;
            r_hold <= s_axi_rvalid && !s_axi_rready;
            if (r_move) w_turn <= 1'b1;
            else if (w_move) w_turn <= 1'b0;
            if (r_move || w_move) tokens <= tokens - 32'(DEN) + 32'(NUM);
            else if (tokens < 32'(DEN)) tokens <= tokens + 32'(NUM);
            if (s_axi_arvalid && s_axi_arready) begin
                rq[r_tail[QB-1:0]] <= '{id: s_axi_arid, beat: 64'(s_axi_araddr) / 64'(NB),
                                        beats: 9'(s_axi_arlen) + 1'b1,
                                        due: now + 64'(LATENCY)};
                r_tail <= r_tail + 1'b1;
            end
            if (r_move) begin
                r_done <= s_axi_rlast ? '0 : r_done + 1'b1;
                if (s_axi_rlast) r_head <= r_head + 1'b1;
            end
            if (s_axi_awvalid && s_axi_awready) begin
                wq[w_tail[QB-1:0]] <= '{id: s_axi_awid, beat: 64'(s_axi_awaddr) / 64'(NB),
                                        beats: 9'(s_axi_awlen) + 1'b1, due: '0};
                w_tail <= w_tail + 1'b1;
            end
            if (w_move) begin
                if (w_ok)
                    for (int k = 0; k < NB; k++)
                        if (s_axi_wstrb[k])
                            mem[w_at][k*8 +: 8] <= s_axi_wdata[k*8 +: 8];
                w_done <= w_final ? '0 : w_done + 1'b1;
                if (w_final) begin
                    w_head <= w_head + 1'b1;
                    // the response: `beat` bit 0 carries whether the burst was out of range
                    bq[b_tail[QB-1:0]] <= '{id: w_cur.id, beat: 64'(!w_ok), beats: '0,
                                            due: now + 64'(LATENCY)};
                    b_tail <= b_tail + 1'b1;
                end
            end
            if (s_axi_bvalid && s_axi_bready) b_head <= b_head + 1'b1;
        end
    end
endmodule

`default_nettype wire
