// fpdeep link keep: the keep flags of a link port beat rebuilt from its link words, for a
// link that carries no keep (fpdeep_link_end's frames end at packet ends, so only a packet's
// last beat is partial). fpdeep_link_pack closes a beat at the word whose last flag (bit
// LAST of the word) is set, so the beat's words run up to the first such word, or fill it.
`default_nettype none

module fpdeep_link_keep #(
    parameter int WW   = 18,
    parameter int TW   = 128,
    parameter int LAST = 16,
    parameter int N    = TW / WW
) (
    input  wire logic [TW-1:0]   data,
    output logic      [TW/8-1:0] keep
);
    int words;
    always_comb begin
        words = N;
        for (int j = N - 1; j >= 0; j--) begin
            if (data[j * WW + LAST]) words = j + 1;
        end
        // byte k is kept when words * WW > 8 k, i.e. words > floor(8 k / WW): a comparison
        // with a constant, not a multiplier
        for (int k = 0; k < TW / 8; k++) keep[k] = words > (k * 8) / WW;
    end
endmodule

`default_nettype wire
