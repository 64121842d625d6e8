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
    localparam int NQ = NB * MP;           // read ports q = bank * MP + port
    localparam int PB = (NQ > 1) ? $clog2(NQ) : 1;

    // The arbitration works on vectors with a bit per client, so its cost grows with the
    // banks, not with banks x clients: a bank finds its requests with BW word-wide ANDs
    // over the clients' bank numbers taken bit by bit, and a round robin's next pick is the
    // lowest set bit of a vector. No array is written at a variable index (slow to synthesise).

    // bit j of every client's bank number
    logic [NR-1:0] rd_bank_bit [BW];
    logic [NW-1:0] wr_bank_bit [BW];
    for (genvar j = 0; j < BW; j++) begin : g_bank_bit
        for (genvar c = 0; c < NR; c++) begin : g_rd
            assign rd_bank_bit[j][c] = rd_bank[c*BW + j];
        end
        for (genvar c = 0; c < NW; c++) begin : g_wr
            assign wr_bank_bit[j][c] = wr_bank[c*BW + j];
        end
    end

    // the clients whose number has bit k set (readers and writers alike, sliced to their
    // count): a one-hot vector's client number, bit k, is whether it meets this mask
    localparam int NC = (NR > NW) ? NR : NW;
    function automatic logic [NC-1:0] clients_with_bit(input int k);
        for (int c = 0; c < NC; c++) clients_with_bit[c] = 1'((c >> k) & 1);
    endfunction

    // per read port q = bank * MP + port, the client it serves (one-hot, zero when idle) and
    // the word it reads; per bank, the client it writes for
    logic [NR-1:0]    rd_pick [NQ];
    logic [WIDTH-1:0] port_q [NQ];
    logic [NW-1:0]    wr_pick [NB];

    for (genvar b = 0; b < NB; b++) begin : g_bank
        localparam int D = DEPTHS[b*32 +: 32];
        localparam int DA = (D > 1) ? $clog2(D) : 1;
        localparam int NP = int'(READS[b*2 +: 2]);
        localparam int BWD = int'(WIDTHS[b*8 +: 8]);
        localparam logic [BW-1:0] ID = BW'(b);
        logic [NR-1:0] rd_want, rd_after;   // asking clients; clients after the last pick
        logic [NW-1:0] wr_want, wr_after, wr_first;
        logic [NR-1:0] pick [MP];
        logic [NR-1:0] rd_last;
        logic [NW-1:0] wr_one;

        // round robin: the first NP asking clients after the last one served (wrapping
        // round), one per port; rd_after all zero is the same as all ones
        always_comb begin
            logic [NR-1:0] hi, lo, from;
            rd_want = rd_req;
            wr_want = wr_req;
            for (int j = 0; j < BW; j++) begin
                rd_want = rd_want & (ID[j] ? rd_bank_bit[j] : ~rd_bank_bit[j]);
                wr_want = wr_want & (ID[j] ? wr_bank_bit[j] : ~wr_bank_bit[j]);
            end
            wr_first = ((wr_want & wr_after) != '0) ? (wr_want & wr_after) : wr_want;
            wr_one = wr_first & (~wr_first + 1'b1);   // its lowest set bit
            hi = rd_want & rd_after;
            lo = rd_want & ~rd_after;
            from = '0;
            rd_last = '0;
            for (int p = 0; p < MP; p++) pick[p] = '0;
            for (int p = 0; p < NP; p++) begin
                from = (hi != '0) ? hi : lo;
                pick[p] = from & (~from + 1'b1);
                hi = hi & ~pick[p];
                lo = lo & ~pick[p];
                if (pick[p] != '0) rd_last = pick[p];
            end
        end
        assign wr_pick[b] = wr_one;

        always_ff @(posedge clk) begin
            if (rst) begin
                rd_after <= '0;
                wr_after <= '0;
            end else begin
                if (rd_last != '0) rd_after <= ~(rd_last | (rd_last - 1'b1));
                if (wr_one != '0) wr_after <= ~(wr_one | (wr_one - 1'b1));
            end
        end

        // the served clients' numbers, for the RAM addresses
        logic [WB-1:0] wr_who;
        for (genvar k = 0; k < WB; k++) begin : g_wr_who
            localparam logic [NW-1:0] WITH_BIT = NW'(clients_with_bit(k));
            assign wr_who[k] = |(wr_one & WITH_BIT);
        end
        for (genvar p = 0; p < MP; p++) begin : g_port
            assign rd_pick[b*MP + p] = pick[p];
            if (p < NP) begin : g_copy
                logic [RB-1:0] who;
                logic [BWD-1:0] q;
                for (genvar k = 0; k < RB; k++) begin : g_who
                    localparam logic [NR-1:0] WITH_BIT = NR'(clients_with_bit(k));
                    assign who[k] = |(pick[p] & WITH_BIT);
                end
                fpdeep_sdp_ram #(.WIDTH(BWD), .DEPTH(D)) u_ram (
                    .clk,
                    .wr_en(wr_one != '0),
                    .wr_addr(wr_addr[int'(wr_who)*AW +: DA]),
                    .wr_data(wr_data[int'(wr_who)*WIDTH +: BWD]),
                    .rd_en(pick[p] != '0),
                    .rd_addr(rd_addr[int'(who)*AW +: DA]),
                    .rd_data(q)
                );
                assign port_q[b*MP + p] = WIDTH'($signed(q));
            end else begin : g_none
                assign port_q[b*MP + p] = '0;
            end
        end
    end

    // bit k of the port that serves each client: the OR of the picks of the ports whose
    // number has bit k set
    logic [NR-1:0] rd_port_bit [PB];
    logic [NR-1:0] rd_from_bit [PB];
    always_comb begin
        rd_gnt = '0;
        for (int k = 0; k < PB; k++) rd_port_bit[k] = '0;
        for (int q = 0; q < NQ; q++) begin
            rd_gnt = rd_gnt | rd_pick[q];
            for (int k = 0; k < PB; k++)
                rd_port_bit[k] = rd_port_bit[k] | (rd_pick[q] & {NR{q[k]}});
        end
        wr_gnt = '0;
        for (int b = 0; b < NB; b++) wr_gnt = wr_gnt | wr_pick[b];
    end

    // a client not served keeps the port it last read from
    always_ff @(posedge clk) begin
        if (rst) rd_valid <= '0;
        else rd_valid <= rd_gnt;
        for (int k = 0; k < PB; k++)
            rd_from_bit[k] <= (rd_port_bit[k] & rd_gnt) | (rd_from_bit[k] & ~rd_gnt);
    end

    always_comb
        for (int c = 0; c < NR; c++) begin
            logic [PB-1:0] from;
            for (int k = 0; k < PB; k++) from[k] = rd_from_bit[k][c];
            rd_data[c*WIDTH +: WIDTH] = port_q[from];
        end
endmodule

`default_nettype wire
