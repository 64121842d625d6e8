// fpdeep requantiser (docs/numerics.md §3): round half up, arithmetic shift, saturate.
//   shift > 0:  y = sat_OW( ((x >>> (shift-1)) + 1) >>> 1 )  -- floor((x + 2^(shift-1)) / 2^shift)
//   shift = 0:  y = sat_OW(x)
//   shift < 0:  y = sat_OW( sat_OW(x) <<< -shift )            -- clamping first cannot change
//                                                                the result and avoids overflow
// `shift` is two's complement, SW bits. Combinational. OW = IW turns saturation off (a plain
// rounding shift, as the SGD step needs).
`default_nettype none

module fpdeep_requant #(
    parameter int IW = 48,
    parameter int OW = 16,
    parameter int SW = 7
) (
    input  wire logic signed [IW-1:0] x,
    input  wire logic signed [SW-1:0] shift,
    output logic signed      [OW-1:0] y
);
    localparam logic signed [IW:0]   ONE = 1;
    localparam logic signed [IW:0]   HI  = (ONE <<< (OW - 1)) - ONE;
    localparam logic signed [IW:0]   LO  = -(ONE <<< (OW - 1));

    // (written without functions and casts of expressions, which yosys' parser lacks)
    logic signed [IW-1:0] half;
    logic signed [IW:0]   xw, xc, hw, r;
    logic        [SW-1:0] left;
    always_comb begin
        half = x >>> (shift - 1'b1);
        left = -shift;
        xw = {x[IW-1], x};            // sign-extended: one bit wider so that x = max and
        hw = {half[IW-1], half};      // shift = 1 cannot overflow
        xc = (xw > HI) ? HI : (xw < LO) ? LO : xw;
        if (shift > 0)       r = (hw + ONE) >>> 1;
        else if (shift == 0) r = xw;
        else                 r = xc <<< left;
        if (r > HI)      y = HI[OW-1:0];
        else if (r < LO) y = LO[OW-1:0];
        else             y = r[OW-1:0];
    end
endmodule

`default_nettype wire
