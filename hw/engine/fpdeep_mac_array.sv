// fpdeep MAC array: TM x TN signed DW x DW multipliers, each with input and product registers
// (the A/B and M registers of a DSP48E2, so synthesis puts every multiplier in one DSP slice),
// followed by a registered reduction selected at run time:
//   REDUCE_ROWS: sum[m][0] = sum over n of a[m][n]*b[m][n]   (FP: output channels on m)
//   REDUCE_COLS: sum[0][n] = sum over m of a[m][n]*b[m][n]   (BP: input channels on n)
//   REDUCE_NONE: sum[m][n] = a[m][n]*b[m][n]                 (WG: one gradient per lane)
// Sums are ACCW bits wide (48, the DSP48 P width) so callers accumulate without overflow.
// Latency from in_valid to out_valid is LATENCY = 3 cycles.
`default_nettype none

module fpdeep_mac_array #(
    parameter int TM   = 2,
    parameter int TN   = 2,
    parameter int DW   = 16,
    parameter int ACCW = 48
) (
    input  wire logic                   clk,
    input  wire logic                   rst,
    input  wire logic                   in_valid,
    input  wire logic [1:0]             reduce,   // 0 rows, 1 columns, 2 none
    input  wire logic [TM*TN*DW-1:0]    a,        // lane (m, n) at bits [(m*TN+n)*DW +: DW]
    input  wire logic [TM*TN*DW-1:0]    b,
    output logic                        out_valid,
    output logic [TM*TN*ACCW-1:0]       sum       // lane (m, n) at bits [(m*TN+n)*ACCW +: ACCW]
);
    localparam logic [1:0] REDUCE_ROWS = 2'd0;
    localparam logic [1:0] REDUCE_COLS = 2'd1;

    logic signed [DW-1:0]     a_q [TM*TN];
    logic signed [DW-1:0]     b_q [TM*TN];
    logic signed [2*DW-1:0]   p_q [TM*TN];
    logic [2:0]               v_q;
    logic [1:0]               r_q [2];

    always_ff @(posedge clk) begin
        for (int i = 0; i < TM*TN; i++) begin
            a_q[i] <= a[i*DW +: DW];
            b_q[i] <= b[i*DW +: DW];
            p_q[i] <= a_q[i] * b_q[i];
        end
        r_q[0] <= reduce;
        r_q[1] <= r_q[0];
        if (rst) v_q <= '0;
        else     v_q <= {v_q[1:0], in_valid};
    end

    // Adder trees are written as loops; synthesis balances them.
    logic signed [ACCW-1:0] row [TM];
    logic signed [ACCW-1:0] col [TN];
    always_comb begin
        for (int m = 0; m < TM; m++) begin
            row[m] = '0;
            for (int n = 0; n < TN; n++) row[m] = row[m] + ACCW'(p_q[m*TN+n]);
        end
        for (int n = 0; n < TN; n++) begin
            col[n] = '0;
            for (int m = 0; m < TM; m++) col[n] = col[n] + ACCW'(p_q[m*TN+n]);
        end
    end

    always_ff @(posedge clk) begin
        for (int m = 0; m < TM; m++) begin
            for (int n = 0; n < TN; n++) begin
                if (r_q[1] == REDUCE_ROWS)
                    sum[(m*TN+n)*ACCW +: ACCW] <= (n == 0) ? row[m] : '0;
                else if (r_q[1] == REDUCE_COLS)
                    sum[(m*TN+n)*ACCW +: ACCW] <= (m == 0) ? col[n] : '0;
                else
                    sum[(m*TN+n)*ACCW +: ACCW] <= ACCW'(p_q[m*TN+n]);
            end
        end
    end
    assign out_valid = v_q[2];
endmodule

`default_nettype wire
