// fpdeep loop nest: NL nested counters (level 0 outermost) that step once per cycle, plus NQ
// affine quantities q = init + sum_l coef[q][l] * idx[l] kept up to date with adders only.
// When level L increments and every inner level wraps to 0, q changes by the constant
//   jump[q][L] = coef[q][L] - sum_{j > L} coef[q][j] * (bound[j] - 1),
// which the host computes once (fpdeep.engine.engine_config), so no multiplier is needed.
// Packing: bound[l] at [l*CW +: CW]; init[q] at [q*AW +: AW]; jump[q][l] at [(q*NL+l)*AW +: AW].
`default_nettype none

module fpdeep_loop_nest #(
    parameter int NL = 6,
    parameter int NQ = 7,
    parameter int CW = 16,
    parameter int AW = 32
) (
    input  wire logic               clk,
    input  wire logic               rst,
    input  wire logic               start,
    input  wire logic [NL*CW-1:0]   bound,
    input  wire logic [NQ*AW-1:0]   init,
    input  wire logic [NQ*NL*AW-1:0] jump,
    output logic                    active,  // idx and q hold a valid iteration this cycle
    output logic                    last,    // ... and it is the final one
    output logic [NQ*AW-1:0]        q,
    output logic [NL*CW-1:0]        idx_o    // the counters, level l at [l*CW +: CW]
);
    logic [CW-1:0] idx [NL];
    always_comb for (int l = 0; l < NL; l++) idx_o[l*CW +: CW] = idx[l];
    logic [NL-1:0] at_max, inner_max;

    always_comb begin
        for (int l = 0; l < NL; l++) at_max[l] = (idx[l] == bound[l*CW +: CW] - 1'b1);
        inner_max[NL-1] = 1'b1;
        for (int l = NL - 2; l >= 0; l--) inner_max[l] = inner_max[l+1] && at_max[l+1];
    end
    assign last = active && inner_max[0] && at_max[0];

    always_ff @(posedge clk) begin
        if (rst) begin
            active <= 1'b0;
        end else if (start) begin
            active <= 1'b1;
            for (int l = 0; l < NL; l++) idx[l] <= '0;
            q <= init;
        end else if (active) begin
            if (last) active <= 1'b0;
            for (int l = 0; l < NL; l++)
                if (inner_max[l]) idx[l] <= at_max[l] ? '0 : idx[l] + 1'b1;
            // exactly one level increments (inner_max && !at_max) unless this is the last step
            for (int k = 0; k < NQ; k++)
                for (int l = 0; l < NL; l++)
                    if (inner_max[l] && !at_max[l])
                        q[k*AW +: AW] <= q[k*AW +: AW] + jump[(k*NL+l)*AW +: AW];
        end
    end
endmodule

`default_nettype wire
