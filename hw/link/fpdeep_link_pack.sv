// fpdeep link gearbox, transmit side: packs WW-bit link words into TW-bit beats of the
// board's link port, word j of a beat in bits [j*WW +: WW], as many as fit (N). A beat
// leaves when it is full or holds a packet's last word, so the last beat of a tensor may be
// partial: m_keep marks the bytes its words occupy and m_last ends the packet. Words are
// taken one a cycle while the beat register drains; only a word that completes a beat
// waits for the port.
`default_nettype none

module fpdeep_link_pack #(
    parameter int WW = 18,
    parameter int TW = 128,
    parameter int N  = TW / WW,
    parameter int CW = $clog2(N + 1)
) (
    input  wire logic            clk,
    input  wire logic            rst,
    input  wire logic [WW-1:0]   s_data,
    input  wire logic            s_last,
    input  wire logic            s_valid,
    output logic                 s_ready,
    output logic [TW-1:0]        m_data,
    output logic [TW/8-1:0]      m_keep,
    output logic                 m_last,
    output logic                 m_valid,
    input  wire logic            m_ready
);
    logic [TW-1:0] acc;    // the words of the beat being filled, the rest zero
    logic [CW-1:0] count;  // words in acc

    // this word completes the beat being filled: the beat register must be free for it
    wire logic completes = s_last || (count == CW'(N - 1));
    assign s_ready = !m_valid || m_ready || !completes;
    wire logic take = s_valid && s_ready;

    logic [TW-1:0] with_word;
    logic [TW/8-1:0] keep;
    always_comb begin
        with_word = acc;
        with_word[int'(count) * WW +: WW] = s_data;
        // the bytes that hold count + 1 words
        for (int k = 0; k < TW / 8; k++) keep[k] = k * 8 < (int'(count) + 1) * WW;
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            acc     <= '0;
            count   <= '0;
            m_data  <= '0;
            m_keep  <= '0;
            m_last  <= 1'b0;
            m_valid <= 1'b0;
        end else begin
            if (m_valid && m_ready) m_valid <= 1'b0;
            if (take && completes) begin
                m_data  <= with_word;
                m_keep  <= keep;
                m_last  <= s_last;
                m_valid <= 1'b1;
                acc     <= '0;
                count   <= '0;
            end else if (take) begin
                acc   <= with_word;
                count <= count + 1'b1;
            end
        end
    end
endmodule

`default_nettype wire
