// The board's on-chip tensor store: NB banks of simple dual-port RAM, bank b holding DEPTHS[b]
// words of WIDTHS[b] bits, shared by NR read clients and NW write clients whose words are
// WIDTH bits. A bank keeps the low WIDTHS[b] bits of each word written to it and returns them
// sign-extended to WIDTH bits, so a bank of 16-bit data is 16 bits wide and its clients see the
// same words as from a WIDTH-bit bank. Each client names a bank and an address; each bank
// grants one write and READS[b] reads per cycle (a bank read by several resources at once is
// kept once per reader, up to three, all copies written together, as BRAM is replicated for
// read ports), round robin among the clients that ask for it, so clients on different banks
// never wait for each other. Read data comes back one cycle after the grant, with rd_valid.
`default_nettype none

module fpdeep_store #(
    parameter int NB = 1,
    parameter int NR = 1,
    parameter int NW = 1,
    parameter int WIDTH = 48,
    parameter int BW = 8,            // bank-number bits
    parameter int AW = 20,           // address bits within a bank
    parameter logic [NB*32-1:0] DEPTHS = {NB{32'd1024}},
    parameter logic [NB*8-1:0]  WIDTHS = {NB{8'd48}},   // bits per word of each bank: 1 to WIDTH
    parameter logic [NB*2-1:0]  READS = {NB{2'd1}}      // read ports per bank: 1 to 3
) (
    input  wire logic             clk,
    input  wire logic             rst,
    input  wire logic [NR-1:0]    rd_req,
    input  wire logic [NR*BW-1:0] rd_bank,
    input  wire logic [NR*AW-1:0] rd_addr,
    output logic      [NR-1:0]    rd_gnt,
    output logic      [NR-1:0]    rd_valid,
    output logic [NR*WIDTH-1:0]   rd_data,
    input  wire logic [NW-1:0]    wr_req,
    input  wire logic [NW*BW-1:0] wr_bank,
    input  wire logic [NW*AW-1:0] wr_addr,
    input  wire logic [NW*WIDTH-1:0] wr_data,
    output logic      [NW-1:0]    wr_gnt
);
    localparam int RB = (NR > 1) ? $clog2(NR) : 1;
    localparam int WB = (NW > 1) ? $clog2(NW) : 1;

    localparam int MP = 3;                 // read ports a bank may have
    logic [MP*NB-1:0]       rd_hit;        // per bank and read port: it serves a client
    logic [NB-1:0]          wr_hit;
    logic [MP*NB*RB-1:0]    rd_who;
    logic [NB*WB-1:0]       wr_who;
    logic [MP*NB*WIDTH-1:0] port_q;
    // which bank read port answers each client next cycle
    logic [NR*(BW+2)-1:0]   rd_from;

    for (genvar b = 0; b < NB; b++) begin : g_bank
        localparam int D = DEPTHS[b*32 +: 32];
        localparam int DA = (D > 1) ? $clog2(D) : 1;
        localparam int NP = int'(READS[b*2 +: 2]);
        localparam int BWD = int'(WIDTHS[b*8 +: 8]);
        logic [RB-1:0] rd_ptr, last_pick;
        logic [MP*RB-1:0] pick;
        logic [MP-1:0] any;
        logic [WB-1:0] wr_ptr, wr_pick;
        logic wr_any;

        // round robin: the first NP asking clients at or after the pointer, one per port
        always_comb begin
            int used;
            used = 0;
            any = '0;
            pick = '0;
            last_pick = '0;
            for (int k = 0; k < NR; k++) begin
                int c;
                c = int'(rd_ptr) + k;
                if (c >= NR) c = c - NR;
                if (used < NP && rd_req[c] && rd_bank[c*BW +: BW] == BW'(b)) begin
                    any[used] = 1'b1;
                    // a constant offset per port: a variable one (used*RB) becomes a
                    // multiplier, which synthesis may put in a DSP slice
                    for (int p = 0; p < MP; p++)
                        if (p == used) pick[p*RB +: RB] = RB'(c);
                    last_pick = RB'(c);
                    used = used + 1;
                end
            end
            wr_any = 1'b0;
            wr_pick = '0;
            for (int k = 0; k < NW; k++) begin
                int c;
                c = int'(wr_ptr) + k;
                if (c >= NW) c = c - NW;
                if (!wr_any && wr_req[c] && wr_bank[c*BW +: BW] == BW'(b)) begin
                    wr_any = 1'b1;
                    wr_pick = WB'(c);
                end
            end
        end

        always_ff @(posedge clk) begin
            if (rst) begin
                rd_ptr <= '0;
                wr_ptr <= '0;
            end else begin
                if (any[0]) rd_ptr <= (int'(last_pick) == NR - 1) ? '0 : last_pick + 1'b1;
                if (wr_any) wr_ptr <= (int'(wr_pick) == NW - 1) ? '0 : wr_pick + 1'b1;
            end
        end

        assign wr_hit[b] = wr_any;
        assign wr_who[b*WB +: WB] = wr_pick;
        for (genvar p = 0; p < MP; p++) begin : g_port
            assign rd_hit[b*MP + p] = any[p];
            assign rd_who[(b*MP + p)*RB +: RB] = pick[p*RB +: RB];
            if (p < NP) begin : g_copy
                logic [BWD-1:0] q;
                fpdeep_sdp_ram #(.WIDTH(BWD), .DEPTH(D)) u_ram (
                    .clk,
                    .wr_en(wr_any),
                    .wr_addr(wr_addr[int'(wr_pick)*AW +: DA]),
                    .wr_data(wr_data[int'(wr_pick)*WIDTH +: BWD]),
                    .rd_en(any[p]),
                    .rd_addr(rd_addr[int'(pick[p*RB +: RB])*AW +: DA]),
                    .rd_data(q)
                );
                assign port_q[(b*MP + p)*WIDTH +: WIDTH] = WIDTH'($signed(q));
            end else begin : g_none
                assign port_q[(b*MP + p)*WIDTH +: WIDTH] = '0;
            end
        end
    end

    always_comb begin
        rd_gnt = '0;
        wr_gnt = '0;
        for (int p = 0; p < MP * NB; p++)
            if (rd_hit[p]) rd_gnt[rd_who[p*RB +: RB]] = 1'b1;
        for (int b = 0; b < NB; b++)
            if (wr_hit[b]) wr_gnt[wr_who[b*WB +: WB]] = 1'b1;
    end

    always_ff @(posedge clk) begin
        if (rst) rd_valid <= '0;
        else rd_valid <= rd_gnt;
        for (int p = 0; p < MP * NB; p++)
            // per client a constant offset, as above: no multiplier for the write
            for (int c = 0; c < NR; c++)
                if (rd_hit[p] && int'(rd_who[p*RB +: RB]) == c)
                    rd_from[c*(BW+2) +: BW+2] <= (BW+2)'(p);
    end

    always_comb
        for (int c = 0; c < NR; c++)
            rd_data[c*WIDTH +: WIDTH] = port_q[int'(rd_from[c*(BW+2) +: BW+2])*WIDTH +: WIDTH];
endmodule

`default_nettype wire
