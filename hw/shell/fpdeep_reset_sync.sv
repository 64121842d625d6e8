// fpdeep reset synchroniser: an asynchronous reset request (a push button, a clock not yet
// locked) becomes an active-low reset that rises in step with clk, STAGES cycles after the
// request ends, so every flop of the board top leaves reset in the same cycle.
`default_nettype none

module fpdeep_reset_sync #(
    parameter int STAGES = 4
) (
    input  wire logic clk,
    input  wire logic arst,   // asynchronous, active high
    output logic      rst_n
);
    (* ASYNC_REG = "TRUE" *) logic [STAGES-1:0] chain;

    always_ff @(posedge clk or posedge arst) begin
        if (arst) chain <= '0;
        else      chain <= {chain[STAGES-2:0], 1'b1};
    end

    assign rst_n = chain[STAGES-1];
endmodule

`default_nettype wire
