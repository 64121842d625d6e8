// Takes `len` words from a stream into one store bank from `addr` on; with `parts` > 0 each
// word arrives as parts+1 beats of PW bits, low part first, and is joined before it is
// written. `err_last` flags a last beat that does not close the command's final word.
`default_nettype none

module fpdeep_mover_wr #(
    parameter int WIDTH = 48,
    parameter int BW = 8,
    parameter int AW = 20,
    parameter int LW = 24,
    parameter int PW = 16
) (
    input  wire logic             clk,
    input  wire logic             rst,
    input  wire logic             cmd_valid,
    input  wire logic [BW-1:0]    cmd_bank,
    input  wire logic [AW-1:0]    cmd_addr,
    input  wire logic [LW-1:0]    cmd_len,
    input  wire logic [1:0]       cmd_parts,
    output logic                  busy,
    output logic                  err_last,
    // store write client
    output logic                  wr_req,
    output logic      [BW-1:0]    wr_bank,
    output logic      [AW-1:0]    wr_addr,
    output logic      [WIDTH-1:0] wr_data,
    input  wire logic             wr_gnt,
    // the stream
    input  wire logic [WIDTH-1:0] s_data,
    input  wire logic             s_last,
    input  wire logic             s_valid,
    output logic                  s_ready,
    output logic                  moved
);
    logic [LW-1:0] left;          // words still to take
    logic [1:0]    parts, part;
    logic          full;          // wr_data holds a whole word not yet written
    logic [WIDTH-1:0] joined;

    assign wr_req = full;
    assign s_ready = (left != '0) && (!full || wr_gnt);
    assign moved = s_valid && s_ready;

    wire logic final_part = (part == parts);
    // a part is its low PW bits (a sign-extended beat keeps its sign only as a whole word)
    wire logic [WIDTH-1:0] shifted = WIDTH'(s_data[PW-1:0]) << (PW * int'(part));

    always_ff @(posedge clk) begin
        if (rst) begin
            left <= '0;
            full <= 1'b0;
            part <= '0;
            err_last <= 1'b0;
        end else begin
            if (cmd_valid) begin
                left <= cmd_len;
                wr_bank <= cmd_bank;
                parts <= cmd_parts;
                part <= '0;
                joined <= '0;
                err_last <= 1'b0;
            end
            if (wr_gnt) wr_addr <= wr_addr + 1'b1;
            if (cmd_valid) wr_addr <= cmd_addr;
            if (wr_gnt && !(moved && final_part)) full <= 1'b0;
            if (moved) begin
                if (final_part) begin
                    wr_data <= (parts == 2'd0) ? s_data : (joined | shifted);
                    full <= 1'b1;
                    left <= left - 1'b1;
                    part <= '0;
                    joined <= '0;
                    if (s_last != (left == LW'(1))) err_last <= 1'b1;
                end else begin
                    joined <= joined | shifted;
                    part <= part + 1'b1;
                end
            end
        end
    end

    assign busy = (left != '0) || full;
endmodule

`default_nettype wire
