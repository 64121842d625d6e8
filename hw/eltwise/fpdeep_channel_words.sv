// The per-channel words of a unit that streams them ahead of each channel's elements
// (fpdeep_bn_frozen's constants, fpdeep_affine's parameter or accumulator): a channel's
// cfg_words words are taken from s_p one a cycle (`take`, word number `index`), then its
// cfg_plane elements, one per `fire`; `loading` while its words are due, `ends` while the
// element to come is the channel's last. Counters only: the unit keeps the words.
`default_nettype none

module fpdeep_channel_words #(
    parameter int AW = 32,
    parameter int KW = 3
) (
    input  wire logic          clk,
    input  wire logic          rst,
    input  wire logic [KW-1:0] cfg_words,   // words per channel, at least 1
    input  wire logic [AW-1:0] cfg_plane,   // elements per channel, at least 1
    input  wire logic          s_p_valid,
    output logic               s_p_ready,
    input  wire logic          fire,        // an element taken (never while loading)
    output logic               loading,
    output logic               take,
    output logic [KW-1:0]      index,
    output logic               ends
);
    logic [AW-1:0] left;  // elements of this channel still to come

    assign loading = index != cfg_words;
    assign s_p_ready = loading;
    assign take = s_p_valid && loading;
    assign ends = left == AW'(1);

    always_ff @(posedge clk) begin
        if (rst) begin
            index <= '0;
            left <= '0;
        end else if (take) begin
            index <= index + KW'(1);
            if (index + KW'(1) == cfg_words) left <= cfg_plane;
        end else if (fire) begin
            // the channel's last element: the next channel's words come next
            if (ends) index <= '0;
            left <= left - AW'(1);
        end
    end
endmodule

`default_nettype wire
