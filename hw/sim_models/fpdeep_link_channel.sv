// fpdeep link channel model, SIMULATION ONLY: a framed link (fpdeep_link_end's tx to the
// peer's rx) with the faults of a real one, on top of fpdeep_link_model's latency and
// bandwidth. Bit errors: each word that enters has one bit flipped with probability
// W * cfg_ber / 2^32 (cfg_ber is the error rate per bit times 2^32; two errors in one word,
// likelier by a factor below W * rate, are left out), the bit drawn uniformly. Frame drops:
// a frame (up to its last word) vanishes with probability cfg_drop / 2^32, still using the
// link's time. Both draw from xorshift64 generators (linear feedback shift registers) seeded
// from cfg_seed at reset, so a run repeats exactly and every host sees the same errors.
// `corrupted` counts the frames delivered with a flipped bit, `dropped` the frames dropped.
`default_nettype none

module fpdeep_link_channel #(
    parameter int W     = 64,
    parameter int DEPTH = 256,
    parameter int CW    = 16
) (
    input  wire logic          clk,
    input  wire logic          rst,
    input  wire logic [CW-1:0] cfg_latency,
    input  wire logic [CW-1:0] cfg_num,
    input  wire logic [CW-1:0] cfg_den,
    input  wire logic [31:0]   cfg_seed,
    input  wire logic [31:0]   cfg_ber,
    input  wire logic [31:0]   cfg_drop,
    input  wire logic [W-1:0]  s_data,
    input  wire logic          s_last,
    input  wire logic          s_valid,
    output logic               s_ready,
    output logic [W-1:0]       m_data,
    output logic               m_last,
    output logic               m_valid,
    input  wire logic          m_ready,
    output logic [31:0]        corrupted,
    output logic [31:0]        dropped
);
    localparam int BW = $clog2(W);

    function automatic logic [63:0] xorshift(input logic [63:0] x);
        logic [63:0] y;
        y = x ^ (x << 13);
        y = y ^ (y >> 7);
        xorshift = y ^ (y << 17);
    endfunction

    logic [63:0] bits_rng, drop_rng;
    logic        dropping, at_start, spoilt;

    // per word: an error when the low half is below the word's rate; the high half picks the bit
    wire logic [63:0] word_rate = 64'(cfg_ber) * 64'(W);
    wire logic        flip  = {32'd0, bits_rng[31:0]} < word_rate;
    wire logic [BW-1:0] where = BW'((64'(bits_rng[63:32]) * 64'(W)) >> 32);
    wire logic        drop_now = at_start ? (drop_rng[31:0] < cfg_drop) : dropping;
    wire logic [W-1:0] flipped = s_data ^ (flip ? (W'(1) << where) : '0);

    // through the latency/bandwidth model with the word's fate: {drop, flipped, last, data}
    logic [W+2:0] out_word;
    logic         out_valid, out_ready;
    fpdeep_link_model #(.W(W + 3), .DEPTH(DEPTH), .CW(CW)) u_link (
        .clk, .rst, .cfg_latency, .cfg_num, .cfg_den,
        .s_data({drop_now, flip, s_last, flipped}), .s_valid, .s_ready,
        .m_data(out_word), .m_valid(out_valid), .m_ready(out_ready));

    wire logic out_drop = out_word[W+2];
    assign m_data    = out_word[W-1:0];
    assign m_last    = out_word[W];
    assign m_valid   = out_valid && !out_drop;
    assign out_ready = m_ready || out_drop;
    wire logic push = s_valid && s_ready;
    wire logic pop  = out_valid && out_ready;

    always_ff @(posedge clk) begin
        if (rst) begin
            bits_rng  <= {~cfg_seed, cfg_seed} | 64'd1;
            drop_rng  <= {cfg_seed, 32'h9E37_79B9} ^ 64'h5851_F42D_4C95_7F2D;
            dropping  <= 1'b0;
            at_start  <= 1'b1;
            spoilt    <= 1'b0;
            corrupted <= '0;
            dropped   <= '0;
        end else begin
            if (push) begin
                bits_rng <= xorshift(bits_rng);
                if (at_start) drop_rng <= xorshift(drop_rng);
                dropping <= drop_now;
                at_start <= s_last;
            end
            if (pop) begin
                spoilt <= (spoilt || out_word[W+1]) && !out_word[W];
                if (out_word[W] && out_drop) dropped <= dropped + 1'b1;
                if (out_word[W] && !out_drop && (spoilt || out_word[W+1]))
                    corrupted <= corrupted + 1'b1;
            end
        end
    end
endmodule

`default_nettype wire
