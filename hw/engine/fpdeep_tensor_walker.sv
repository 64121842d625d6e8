// fpdeep tensor walker: visits a tensor in C order and says where each element lives in a
// lane-banked buffer. Channel dimension 1 (n1 channels) is spread over t1 lanes, channel
// dimension 2 (n2, over t2 lanes) likewise, and p spatial positions follow; the element
// (c1, c2, pos) sits in lane (c1 % t1, c2 % t2) at address ((c1/t1) * ceil(n2/t2) + c2/t2) * p + pos.
// Used to fill operand banks from streams and to drain result banks, without dividers.
`default_nettype none

module fpdeep_tensor_walker #(
    parameter int CW = 16,
    parameter int ADDR_W = 16
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic              restart,
    input  wire logic              step,
    input  wire logic [CW-1:0]     n1,
    input  wire logic [CW-1:0]     t1,
    input  wire logic [CW-1:0]     n2,
    input  wire logic [CW-1:0]     t2,
    input  wire logic [ADDR_W-1:0] p,
    output logic      [CW-1:0]     l1,
    output logic      [CW-1:0]     l2,
    output logic      [ADDR_W-1:0] addr,
    output logic                   last
);
    logic [CW-1:0]     c1, c2;
    logic [ADDR_W-1:0] pos, blk, blk1;

    assign addr = blk + pos;
    wire logic pos_end = (pos == p - 1'b1);
    wire logic c2_end  = (c2 == n2 - 1'b1);
    assign last = (c1 == n1 - 1'b1) && c2_end && pos_end;

    always_ff @(posedge clk) begin
        if (rst || restart || (step && last)) begin
            c1 <= '0; l1 <= '0; c2 <= '0; l2 <= '0; pos <= '0; blk <= '0; blk1 <= '0;
        end else if (step) begin
            if (!pos_end) begin
                pos <= pos + 1'b1;
            end else begin
                pos <= '0;
                if (!c2_end) begin
                    c2 <= c2 + 1'b1;
                    if (l2 == t2 - 1'b1) begin
                        l2  <= '0;
                        blk <= blk + p;
                    end else begin
                        l2 <= l2 + 1'b1;
                    end
                end else begin
                    c2 <= '0;
                    l2 <= '0;
                    c1 <= c1 + 1'b1;
                    if (l1 == t1 - 1'b1) begin
                        // next block of dimension 1 starts right after the last block used
                        l1   <= '0;
                        blk  <= blk + p;
                        blk1 <= blk + p;
                    end else begin
                        l1  <= l1 + 1'b1;
                        blk <= blk1;
                    end
                end
            end
        end
    end
endmodule

`default_nettype wire
