// Reads `len` words of one store bank from `addr` on (or the same word `len` times with
// `hold`) and streams them out, each word as `parts` beats of PW bits, low part first (a raw
// 48-bit sum goes over a 16-bit link as three beats). `last` marks the final beat. A small
// FIFO absorbs the store's read latency so that an always-ready reader gets a beat per cycle.
// A command with `chain` set goes on into the next one, which may come while it runs (one
// waits): their words form one stream, with no gap and `last` only at the end, so a tensor
// kept in two banks (fpdeep.codegen.layout) streams as one. Chained commands share `parts`.
`default_nettype none

module fpdeep_mover_rd #(
    parameter int WIDTH = 48,
    parameter int BW = 8,
    parameter int AW = 20,
    parameter int LW = 24,
    parameter int PW = 16
) (
    input  wire logic             clk,
    input  wire logic             rst,
    // command: taken when cmd_valid (the mover must be idle)
    input  wire logic             cmd_valid,
    input  wire logic [BW-1:0]    cmd_bank,
    input  wire logic [AW-1:0]    cmd_addr,
    input  wire logic [LW-1:0]    cmd_len,
    input  wire logic             cmd_hold,
    input  wire logic [1:0]       cmd_parts,   // beats per word minus one
    input  wire logic             cmd_chain,   // the next command continues the stream
    output logic                  busy,
    // store read client
    output logic                  rd_req,
    output logic      [BW-1:0]    rd_bank,
    output logic      [AW-1:0]    rd_addr,
    input  wire logic             rd_gnt,
    input  wire logic             rd_valid,
    input  wire logic [WIDTH-1:0] rd_data,
    // the stream
    output logic      [WIDTH-1:0] m_data,
    output logic                  m_last,
    output logic                  m_valid,
    input  wire logic             m_ready,
    output logic                  moved        // a beat left this cycle
);
    localparam int FD = 4;

    logic [LW-1:0] left;          // words still to request
    logic          hold, chain;
    logic [1:0]    parts, part;
    logic          inflight, inflight_last;
    logic [2:0]    count;
    logic [WIDTH-1:0] f_data;
    logic          f_last, f_valid, f_pop;
    logic          f_space;  // always true: requests are issued only with room left
    wire logic     unused = f_space;
    // the command that continues a chained one, until the current one has asked for its words
    logic          nx_valid, nx_hold, nx_chain;
    logic [BW-1:0] nx_bank;
    logic [AW-1:0] nx_addr;
    logic [LW-1:0] nx_len;

    assign rd_req = (left != '0) && (32'(count) + 32'(inflight) < FD);
    wire logic take = rd_req && rd_gnt;
    // after this cycle the current command has no word left to ask for
    wire logic spent = (left == '0) || (left == LW'(1) && take);

    always_ff @(posedge clk) begin
        if (rst) begin
            left <= '0;
            inflight <= 1'b0;
            nx_valid <= 1'b0;
        end else begin
            if (take) begin
                left <= left - 1'b1;
                if (!hold) rd_addr <= rd_addr + 1'b1;
            end
            if (cmd_valid && spent && !nx_valid) begin
                left <= cmd_len;
                rd_bank <= cmd_bank;
                rd_addr <= cmd_addr;
                hold <= cmd_hold;
                chain <= cmd_chain;
                parts <= cmd_parts;
            end else if (cmd_valid) begin
                nx_valid <= 1'b1;
                nx_len <= cmd_len;
                nx_bank <= cmd_bank;
                nx_addr <= cmd_addr;
                nx_hold <= cmd_hold;
                nx_chain <= cmd_chain;
            end else if (nx_valid && spent) begin
                nx_valid <= 1'b0;
                left <= nx_len;
                rd_bank <= nx_bank;
                rd_addr <= nx_addr;
                hold <= nx_hold;
                chain <= nx_chain;
            end
            inflight <= take;
            inflight_last <= left == LW'(1) && !chain;
        end
    end

    fpdeep_stream_fifo #(.WIDTH(WIDTH), .DEPTH(FD)) u_fifo (
        .clk, .rst,
        .s_data(rd_data), .s_last(inflight_last), .s_valid(rd_valid && inflight),
        .s_ready(f_space),
        .m_data(f_data), .m_last(f_last), .m_valid(f_valid), .m_ready(f_pop),
        .count(count)
    );

    wire logic final_part = (part == parts);
    assign m_valid = f_valid;
    assign m_data = f_data >> (PW * int'(part));
    assign m_last = f_last && final_part;
    assign f_pop = m_ready && final_part;
    assign moved = m_valid && m_ready;

    always_ff @(posedge clk) begin
        if (rst || (cmd_valid && !busy)) part <= '0;
        else if (moved) part <= final_part ? '0 : part + 1'b1;
    end

    assign busy = (left != '0) || nx_valid || inflight || f_valid;
endmodule

`default_nettype wire
