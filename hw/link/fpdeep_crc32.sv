// CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320), one W-bit word a cycle: the
// register after `data`, bit 0 first, so that bytes go in little-endian order. With the
// register started at all ones and the result inverted it is zlib's crc32 of the words'
// bytes. Unrolled over the word, it is an XOR tree per register bit.
`default_nettype none

module fpdeep_crc32 #(
    parameter int W = 64
) (
    input  wire logic [31:0]  crc_in,
    input  wire logic [W-1:0] data,
    output logic      [31:0]  crc_out
);
    localparam logic [31:0] POLY = 32'hEDB8_8320;

    always_comb begin
        crc_out = crc_in;
        for (int i = 0; i < W; i++) begin
            crc_out = (crc_out >> 1) ^ ((crc_out[0] ^ data[i]) ? POLY : 32'h0);
        end
    end
endmodule

`default_nettype wire
