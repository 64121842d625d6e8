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

    // Lanes in packed vectors and per-lane registers in a generate loop: every register has a
    // constant position, so a simulator updates them in place (Verilator keeps loops of more
    // than 16 iterations as loops and queues their non-blocking writes to unpacked arrays).
    logic [TM*TN*DW-1:0]      a_q, b_q;
    logic [TM*TN*2*DW-1:0]    p_q;
    logic [2:0]               v_q;
    logic [1:0]               r_q [2];

    always_ff @(posedge clk) begin
        a_q <= a;
        b_q <= b;
        r_q[0] <= reduce;
        r_q[1] <= r_q[0];
        if (rst) v_q <= '0;
        else     v_q <= {v_q[1:0], in_valid};
    end
    logic signed [2*DW-1:0]   p [TM*TN];   // lane i's product register
    for (genvar i = 0; i < TM*TN; i++) begin : g_lane
        always_ff @(posedge clk)
            p_q[i*2*DW +: 2*DW] <= $signed(a_q[i*DW +: DW]) * $signed(b_q[i*DW +: DW]);
        assign p[i] = p_q[i*2*DW +: 2*DW];
    end

    // Adder trees are written as loops; synthesis balances them.
    logic signed [ACCW-1:0] row [TM];
    logic signed [ACCW-1:0] col [TN];
    always_comb begin
        for (int m = 0; m < TM; m++) begin
            row[m] = '0;
            for (int n = 0; n < TN; n++) row[m] = row[m] + ACCW'(p[m*TN+n]);
        end
        for (int n = 0; n < TN; n++) begin
            col[n] = '0;
            for (int m = 0; m < TM; m++) col[n] = col[n] + ACCW'(p[m*TN+n]);
        end
    end

    for (genvar m = 0; m < TM; m++) begin : g_row
        for (genvar n = 0; n < TN; n++) begin : g_col
            always_ff @(posedge clk)
                if (r_q[1] == REDUCE_ROWS)
                    sum[(m*TN+n)*ACCW +: ACCW] <= (n == 0) ? row[m] : '0;
                else if (r_q[1] == REDUCE_COLS)
                    sum[(m*TN+n)*ACCW +: ACCW] <= (m == 0) ? col[n] : '0;
                else
                    sum[(m*TN+n)*ACCW +: ACCW] <= ACCW'(p[m*TN+n]);
        end
    end
    assign out_valid = v_q[2];
endmodule

`default_nettype wire
