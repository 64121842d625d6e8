// fpdeep link deframer: the receiving half of a reliable board-to-board link, the inverse of
// fpdeep_link_framer (whose header describes the frame format). The link never waits
// (s_ready is always high, as on an Aurora receiver): every frame is checked as it arrives
// and its payload written, on trust, behind the words already accepted; the trailer's CRC-32
// then keeps the frame (a good data frame with the expected sequence number) or takes it
// back. Kept payload leaves on m_* with its tag and the packet's last flag.
//
// What the local framer is asked to tell the peer (adv_*): an ACK for a kept frame or a
// repeat of one already kept; a NAK for a data frame with a bad CRC or past a lost one, not
// again within cfg_holdoff cycles (about a round trip: the replay it asked for is on its way)
// unless a frame was kept since, so that a spoilt replay is asked for again without waiting
// for the sender's timeout; the credit limit, payload words since reset that fit in the
// RXD-word buffer. A good control frame from the peer is passed to the framer (peer_*).
// `overflow` (sticky) rises if a frame the buffer has no room for would have been kept:
// the peer broke the credit rule.
`default_nettype none

module fpdeep_link_deframer #(
    parameter int W      = 64,
    parameter int TAGW   = 16,
    parameter int SEQW   = 8,
    parameter int MAXLEN = 64,    // the framer's; longer frames are refused. RXD >= MAXLEN
    parameter int RXD    = 1024   // receive buffer words, a power of two; a round trip of words
) (
    input  wire logic            clk,
    input  wire logic            rst,
    input  wire logic [31:0]     cfg_holdoff,   // cycles before a NAK is repeated
    input  wire logic [W-1:0]    s_data,
    input  wire logic            s_last,
    input  wire logic            s_valid,
    output logic                 s_ready,
    output logic [W-1:0]         m_data,
    output logic [TAGW-1:0]      m_tag,
    output logic                 m_last,
    output logic                 m_valid,
    input  wire logic            m_ready,
    output logic                 peer_valid,
    output logic                 peer_nak,
    output logic [SEQW-1:0]      peer_seq,
    output logic [31:0]          peer_credit,
    output logic                 adv_ack,
    output logic                 adv_nak,
    output logic [SEQW-1:0]      adv_seq,
    output logic [31:0]          adv_credit,
    output logic [31:0]          frames,       // data frames kept
    output logic [31:0]          crc_errors,   // frames of any type with a bad CRC or form
    output logic [31:0]          discards,     // good data frames out of sequence
    output logic                 overflow
);
    localparam int XW = $clog2(RXD);
    localparam logic [1:0] DATA = 2'd0, NAK = 2'd2;

    logic [31:0]     wr_ptr, kept_ptr, rd_ptr;   // words since reset: written, kept, read

    logic            at_head;            // the next word starts a frame
    logic [1:0]      h_type;
    logic [SEQW-1:0] h_seq;
    logic [15:0]     h_len, count;
    logic [TAGW-1:0] h_tag;
    logic            h_last;
    logic [31:0]     h_credit;
    logic            writing;            // an in-sequence data frame: its payload is written
    logic            no_room;            // a payload word found the buffer full
    logic            nak_sent;           // since the last kept frame
    logic [31:0]     since_nak;
    logic [SEQW-1:0] expected;
    logic [31:0]     crc, crc_next;

    assign s_ready = 1'b1;
    fpdeep_crc32 #(.W(W)) u_crc (.crc_in(at_head ? '1 : crc), .data(s_data), .crc_out(crc_next));

    // the trailer: the CRC over header and payload, a frame of the form its header gives
    wire logic [31:0] crc_sum = ~crc;   // zlib's CRC; the trailer's other bits are zero
    wire logic crc_good  = (s_data == W'(crc_sum));
    wire logic form_good = !at_head && count == h_len && count <= 16'(MAXLEN)
                           && ((h_type == DATA) == (count != '0));
    wire logic good      = crc_good && form_good;
    wire logic in_seq    = (h_seq == expected);
    wire logic keep      = good && h_type == DATA && in_seq && !no_room;
    // a good frame from past a gap (a lost frame), not a repeat of one kept
    wire logic ahead     = SEQW'(h_seq - expected) < SEQW'(1 << (SEQW - 1));
    wire logic has_room  = (wr_ptr - rd_ptr) != 32'(RXD);
    wire logic word_in   = s_valid && !s_last && !at_head;

    // The receive buffer, {tag, last, data}, in block RAM read a cycle ahead so that it always
    // shows the word at rd_ptr; a word is kept (and so read) only a cycle after it was written.
    wire logic        read     = m_valid && m_ready;
    wire logic [31:0] rd_next  = rd_ptr + 32'(read);
    wire logic        write    = word_in && writing && has_room;
    fpdeep_sdp_ram #(.WIDTH(TAGW + 1 + W), .DEPTH(RXD), .RAM_STYLE("block")) u_buffer (
        .clk, .wr_en(write), .wr_addr(wr_ptr[XW-1:0]),
        .wr_data({h_tag, h_last && (count + 1'b1 == h_len), s_data}),
        .rd_en(1'b1), .rd_addr(rd_next[XW-1:0]), .rd_data({m_tag, m_last, m_data}));
    assign m_valid = (rd_ptr != kept_ptr);
    assign adv_seq    = expected;
    assign adv_credit = rd_ptr + 32'(RXD);

    always_ff @(posedge clk) begin
        if (rst) begin
            wr_ptr <= '0;
            kept_ptr <= '0;
            rd_ptr <= '0;
            at_head <= 1'b1;
            h_type <= DATA;
            h_seq <= '0;
            h_len <= '0;
            count <= '0;
            h_tag <= '0;
            h_last <= 1'b0;
            h_credit <= '0;
            writing <= 1'b0;
            no_room <= 1'b0;
            nak_sent <= 1'b0;
            since_nak <= '0;
            expected <= '0;
            crc <= '1;
            peer_valid <= 1'b0;
            peer_nak <= 1'b0;
            peer_seq <= '0;
            peer_credit <= '0;
            adv_ack <= 1'b0;
            adv_nak <= 1'b0;
            frames <= '0;
            crc_errors <= '0;
            discards <= '0;
            overflow <= 1'b0;
        end else begin
            rd_ptr     <= rd_next;
            peer_valid <= 1'b0;
            adv_ack    <= 1'b0;
            adv_nak    <= 1'b0;
            if (since_nak != '1) since_nak <= since_nak + 1'b1;
            if (s_valid && !s_last) begin
                crc <= crc_next;
                if (at_head) begin
                    h_type   <= s_data[1:0];
                    h_last   <= s_data[2];
                    h_seq    <= s_data[8 +: SEQW];
                    h_len    <= s_data[31:16];
                    h_tag    <= s_data[32 +: TAGW];
                    h_credit <= s_data[63:32];
                    count    <= '0;
                    writing  <= s_data[1:0] == DATA && s_data[8 +: SEQW] == expected;
                    no_room  <= 1'b0;
                    at_head  <= 1'b0;
                end else begin
                    count <= count + 1'b1;
                    if (write) wr_ptr <= wr_ptr + 1'b1;
                    if (writing && !has_room) no_room <= 1'b1;
                end
            end
            if (s_valid && s_last) begin
                at_head <= 1'b1;
                writing <= 1'b0;
                if (keep) begin
                    kept_ptr <= wr_ptr;
                    expected <= expected + 1'b1;
                    frames   <= frames + 1'b1;
                    adv_ack  <= 1'b1;
                    nak_sent <= 1'b0;
                end else begin
                    wr_ptr <= kept_ptr;
                end
                if (good && h_type == DATA && in_seq && no_room) overflow <= 1'b1;
                if (!good) crc_errors <= crc_errors + 1'b1;
                if (good && h_type == DATA && !in_seq) begin
                    discards <= discards + 1'b1;
                    if (!ahead) adv_ack <= 1'b1;
                end
                // a data frame lost or spoilt (control frames have no payload): ask again
                if (((!good && count != '0) || (good && h_type == DATA && !in_seq && ahead))
                    && (!nak_sent || since_nak >= cfg_holdoff)) begin
                    adv_nak   <= 1'b1;
                    nak_sent  <= 1'b1;
                    since_nak <= '0;
                end
                if (good && h_type != DATA) begin
                    peer_valid  <= 1'b1;
                    peer_nak    <= h_type == NAK;
                    peer_seq    <= h_seq;
                    peer_credit <= h_credit;
                end
            end
        end
    end
endmodule

`default_nettype wire
