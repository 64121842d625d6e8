// fpdeep link gearbox, receive side: the inverse of fpdeep_link_pack. A TW-bit beat of the
// board's link port holds up to N WW-bit link words (word j in bits [j*WW +: WW]); the words
// whose last byte s_keep marks are passed on one a cycle, in order. The next beat is taken
// as the last word of the held one leaves, so a stream of full beats flows without a gap.
`default_nettype none

module fpdeep_link_unpack #(
    parameter int WW = 18,
    parameter int TW = 128,
    parameter int N  = TW / WW,
    parameter int CW = $clog2(N + 1)
) (
    input  wire logic            clk,
    input  wire logic            rst,
    input  wire logic [TW-1:0]   s_data,
    input  wire logic [TW/8-1:0] s_keep,
    input  wire logic            s_last,
    input  wire logic            s_valid,
    output logic                 s_ready,
    output logic [WW-1:0]        m_data,
    output logic                 m_last,
    output logic                 m_valid,
    input  wire logic            m_ready
);
    logic [TW-1:0] beat;
    logic [CW-1:0] words, index;  // words in the held beat, the next one to pass on
    logic          beat_last;

    // words of the arriving beat: word j is there when the byte holding its last bit is kept
    logic [CW-1:0] arriving;
    always_comb begin
        arriving = '0;
        for (int j = 0; j < N; j++) begin
            if (s_keep[((j + 1) * WW - 1) / 8]) arriving = CW'(j + 1);
        end
    end

    wire logic final_word = (index + 1'b1 == words);
    assign m_valid = (words != '0);
    assign m_data  = beat[int'(index) * WW +: WW];
    assign m_last  = beat_last && final_word;
    assign s_ready = !m_valid || (m_ready && final_word);

    always_ff @(posedge clk) begin
        if (rst) begin
            beat      <= '0;
            words     <= '0;
            index     <= '0;
            beat_last <= 1'b0;
        end else if (s_valid && s_ready) begin
            beat      <= s_data;
            words     <= arriving;
            index     <= '0;
            beat_last <= s_last;
        end else if (m_valid && m_ready) begin
            if (final_word) words <= '0;
            index <= index + 1'b1;
        end
    end
endmodule

`default_nettype wire
