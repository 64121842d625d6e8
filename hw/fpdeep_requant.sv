// fpdeep requantiser (docs/numerics.md): round half up, arithmetic shift right, saturate.
//   y = sat_OW( ((x >>> (shift-1)) + 1) >>> 1 )   for shift > 0,   y = sat_OW(x) for shift = 0,
// the overflow-free form of floor((x + 2^(shift-1)) / 2^shift). Combinational.
`default_nettype none

module fpdeep_requant #(
    parameter int IW = 48,
    parameter int OW = 16,
    parameter int SW = 6
) (
    input  wire logic signed [IW-1:0] x,
    input  wire logic        [SW-1:0] shift,
    output logic signed      [OW-1:0] y
);
    localparam logic signed [IW-1:0] HI = IW'((64'sd1 <<< (OW - 1)) - 1);
    localparam logic signed [IW-1:0] LO = -IW'(64'sd1 <<< (OW - 1));

    localparam logic signed [IW-1:0] ONE = 1;

    logic signed [IW-1:0] half, r;
    always_comb begin
        half = x >>> (shift - 1'b1);
        r = (shift == '0) ? x : ((half + ONE) >>> 1);
        if (r > HI)      y = HI[OW-1:0];
        else if (r < LO) y = LO[OW-1:0];
        else             y = r[OW-1:0];
    end
endmodule

`default_nettype wire
