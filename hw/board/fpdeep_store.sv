// The board's on-chip tensor store: NB banks of simple dual-port RAM (one read and one write
// port each, WIDTH-bit words, bank b holding DEPTHS[b] words), shared by NR read clients and NW
// write clients. Each client names a bank and an address; each bank grants one read and one
// write per cycle, round robin among the clients that ask for it, so clients on different banks
// never wait for each other. Read data comes back one cycle after the grant, with rd_valid.
`default_nettype none

module fpdeep_store #(
    parameter int NB = 1,
    parameter int NR = 1,
    parameter int NW = 1,
    parameter int WIDTH = 48,
    parameter int BW = 8,            // bank-number bits
    parameter int AW = 20,           // address bits within a bank
    parameter logic [NB*32-1:0] DEPTHS = {NB{32'd1024}}
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

    logic [NB-1:0]        rd_hit, wr_hit;
    logic [NB*RB-1:0]     rd_who;
    logic [NB*WB-1:0]     wr_who;
    logic [NB*WIDTH-1:0]  bank_q;
    // which bank answers each client next cycle
    logic [NR*BW-1:0]     rd_from;

    for (genvar b = 0; b < NB; b++) begin : g_bank
        localparam int D = DEPTHS[b*32 +: 32];
        localparam int DA = (D > 1) ? $clog2(D) : 1;
        logic [RB-1:0] rd_ptr, rd_pick;
        logic [WB-1:0] wr_ptr, wr_pick;
        logic rd_any, wr_any;

        // round robin: the first asking client at or after the pointer
        always_comb begin
            rd_any = 1'b0;
            rd_pick = '0;
            for (int k = 0; k < NR; k++) begin
                int c;
                c = int'(rd_ptr) + k;
                if (c >= NR) c = c - NR;
                if (!rd_any && rd_req[c] && rd_bank[c*BW +: BW] == BW'(b)) begin
                    rd_any = 1'b1;
                    rd_pick = RB'(c);
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
                if (rd_any) rd_ptr <= (int'(rd_pick) == NR - 1) ? '0 : rd_pick + 1'b1;
                if (wr_any) wr_ptr <= (int'(wr_pick) == NW - 1) ? '0 : wr_pick + 1'b1;
            end
        end

        assign rd_hit[b] = rd_any;
        assign wr_hit[b] = wr_any;
        assign rd_who[b*RB +: RB] = rd_pick;
        assign wr_who[b*WB +: WB] = wr_pick;

        fpdeep_sdp_ram #(.WIDTH(WIDTH), .DEPTH(D)) u_ram (
            .clk,
            .wr_en(wr_any),
            .wr_addr(wr_addr[int'(wr_pick)*AW +: DA]),
            .wr_data(wr_data[int'(wr_pick)*WIDTH +: WIDTH]),
            .rd_en(rd_any),
            .rd_addr(rd_addr[int'(rd_pick)*AW +: DA]),
            .rd_data(bank_q[b*WIDTH +: WIDTH])
        );
    end

    always_comb begin
        rd_gnt = '0;
        wr_gnt = '0;
        for (int b = 0; b < NB; b++) begin
            if (rd_hit[b]) rd_gnt[rd_who[b*RB +: RB]] = 1'b1;
            if (wr_hit[b]) wr_gnt[wr_who[b*WB +: WB]] = 1'b1;
        end
    end

    always_ff @(posedge clk) begin
        if (rst) rd_valid <= '0;
        else rd_valid <= rd_gnt;
        for (int c = 0; c < NR; c++)
            if (rd_gnt[c]) rd_from[c*BW +: BW] <= rd_bank[c*BW +: BW];
    end

    always_comb
        for (int c = 0; c < NR; c++)
            rd_data[c*WIDTH +: WIDTH] = bank_q[int'(rd_from[c*BW +: BW])*WIDTH +: WIDTH];
endmodule

`default_nettype wire
