// fpdeep link framer: the sending half of a reliable board-to-board link (Aurora 64B/66B
// streams flip bits and cannot hold the sender back). Payload words are gathered in a replay
// buffer into frames of at most cfg_maxlen words (0 or above MAXLEN: MAXLEN; a frame also ends
// at a packet's last word; shorter frames get through a noisy line more often) and
// each frame leaves on the link stream as
//     header, payload words, trailer (m_last)
// Header word: [1:0] type (0 data, 1 ACK, 2 NAK, 3 credit), [2] the frame ends a packet,
// [15:8] sequence number, [31:16] payload words, [63:32] the tag (data) or the credit limit
// (control); the rest zero. Trailer: [31:0] CRC-32 (fpdeep_crc32, zlib's crc32 of the header's
// and payload's bytes, little-endian), the rest zero.
//
// Credits: the peer's receiver advertises a credit limit, the payload words since reset it
// has room for; a word is taken only below that limit, so the receiver never overflows.
// Go-back-N: frames stay in the replay buffer until the peer's cumulative ACK; a NAK, or no
// ACK for cfg_timeout cycles, sends again every frame from the oldest unacknowledged one.
// Control frames (header and trailer only) tell the peer what the local deframer asks
// (adv_*): the next frame it expects and its credit limit; they go between data frames, NAK
// before ACK before credit, and at least every cfg_refresh cycles, so a lost one is
// repaired. New credit goes at once when it amounts to a frame, else only while no data
// frame waits and not within MAXLEN cycles of the last control frame: a reader that drains a
// word at a time would otherwise fill the line with credit frames that hold data back. `stuck` (sticky) rises when there is work but neither ACKs nor credits have
// moved for cfg_stuck cycles, e.g. when the peer never returns credits.
`default_nettype none

module fpdeep_link_framer #(
    parameter int W      = 64,    // link word bits, at least 64
    parameter int TAGW   = 16,    // tag bits (tensor id), at most 32
    parameter int SEQW   = 8,     // sequence number bits, at most 8
    parameter int FW     = 4,     // 2^FW frames await an ACK at most; FW < SEQW
    parameter int MAXLEN = 64,    // payload words a frame, below 2^16
    parameter int RD     = 1024   // replay buffer words, a power of two
) (
    input  wire logic            clk,
    input  wire logic            rst,
    input  wire logic [31:0]     cfg_timeout,   // cycles without an ACK before a replay
    input  wire logic [31:0]     cfg_stuck,     // cycles without progress before `stuck`
    input  wire logic [31:0]     cfg_refresh,   // cycles between control frames, at most
    input  wire logic [15:0]     cfg_maxlen,    // payload words a frame, at most; 0: MAXLEN
    input  wire logic [W-1:0]    s_data,
    input  wire logic [TAGW-1:0] s_tag,
    input  wire logic            s_last,
    input  wire logic            s_valid,
    output logic                 s_ready,
    output logic [W-1:0]         m_data,
    output logic                 m_last,
    output logic                 m_valid,
    input  wire logic            m_ready,
    // a good control frame from the peer: the next frame it expects and its credit limit
    input  wire logic            peer_valid,
    input  wire logic            peer_nak,
    input  wire logic [SEQW-1:0] peer_seq,
    input  wire logic [31:0]     peer_credit,
    // what the local deframer asks to tell the peer
    input  wire logic            adv_ack,
    input  wire logic            adv_nak,
    input  wire logic [SEQW-1:0] adv_seq,
    input  wire logic [31:0]     adv_credit,
    output logic [31:0]          frames,          // data frames sent, replays included
    output logic [31:0]          replays,         // data frames sent again
    output logic [31:0]          timeouts,        // replays that no NAK asked for
    output logic [31:0]          credit_stalls,   // cycles a payload word waited for credit
    output logic                 stuck
);
    localparam int NF = 1 << FW;
    localparam int RW = $clog2(RD);
    localparam logic [1:0] DATA = 2'd0, ACK = 2'd1, NAK = 2'd2, CREDIT = 2'd3;
    typedef enum logic [1:0] {IDLE, HEAD, BODY, TAIL} state_t;

    // the frames in the replay buffer (sequence number mod NF)
    logic [31:0]     slot_start [NF];
    logic [15:0]     slot_len   [NF];
    logic [TAGW-1:0] slot_tag   [NF];
    logic            slot_last  [NF];

    // the frame being gathered; offsets count payload words since reset
    logic [SEQW-1:0] ing_seq;
    logic [15:0]     ing_len;
    logic [31:0]     ing_start, wr_off;
    logic [TAGW-1:0] ing_tag;

    // what the peer has acknowledged and allows; what has been sent
    logic [SEQW-1:0] acked_seq, high_seq, send_seq;
    logic [31:0]     acked_off, credit_limit, sent_credit;
    logic            go_back, ack_pending, nak_pending;
    logic [31:0]     since_ack, quiet, since_control;

    // ---- gathering payload words ----------------------------------------------------------
    wire logic window_full = (SEQW'(ing_seq - acked_seq) == SEQW'(NF));
    wire logic buffer_full = (wr_off - acked_off) == 32'(RD);
    wire logic has_credit  = $signed(credit_limit - wr_off) > 0;
    assign s_ready = !window_full && !buffer_full && has_credit;
    wire logic take  = s_valid && s_ready;
    wire logic [15:0] frame_len = (cfg_maxlen == '0 || cfg_maxlen > 16'(MAXLEN))
                                  ? 16'(MAXLEN) : cfg_maxlen;
    wire logic close = s_last || (ing_len == frame_len - 16'd1);

    // ---- what the peer says ---------------------------------------------------------------
    wire logic [SEQW-1:0] in_flight = high_seq - acked_seq;
    wire logic [SEQW-1:0] newly     = peer_seq - acked_seq;
    wire logic ack_moves    = peer_valid && newly != '0 && newly <= in_flight;
    wire logic credit_moves = peer_valid && $signed(peer_credit - credit_limit) > 0;
    wire logic nak_now   = peer_valid && peer_nak && peer_seq != high_seq;
    wire logic timed_out = !ack_moves && in_flight != '0 && since_ack >= cfg_timeout;
    // where the acknowledged frames end: the start of the next one (gathered or not)
    wire logic [31:0] ack_off = (peer_seq == ing_seq) ? ing_start
                                                      : slot_start[peer_seq[FW-1:0]];

    // ---- choosing the next frame, at a frame boundary ---------------------------------------
    // an ACK may overtake the frames being sent; a replay starts at the oldest unacknowledged
    wire logic send_behind = SEQW'(send_seq - acked_seq) > SEQW'(ing_seq - acked_seq);
    wire logic [SEQW-1:0] start_seq = (go_back || send_behind) ? acked_seq : send_seq;
    wire logic data_ready  = start_seq != ing_seq;
    wire logic [31:0] credit_gain = adv_credit - sent_credit;
    wire logic control_due = nak_pending || ack_pending || since_control >= cfg_refresh
                             || credit_gain >= 32'(MAXLEN)
                             || (credit_gain != '0 && !data_ready
                                 && since_control >= 32'(MAXLEN));
    wire logic is_replay   = SEQW'(start_seq - acked_seq) < in_flight;

    state_t          state;
    logic [1:0]      cur_type;
    logic [SEQW-1:0] cur_seq;
    logic [15:0]     cur_len, cur_sent;
    logic [RW-1:0]   cur_addr, addr_next;
    logic [W-1:0]    replay_word;        // the replay buffer's word at cur_addr
    logic [TAGW-1:0] cur_tag;
    logic            cur_last;
    logic [31:0]     cur_credit, crc, crc_next;

    wire logic [31:0] crc_sum = ~crc;   // zlib's CRC; the trailer's other bits are zero
    wire logic [31:0] header_top = (cur_type == DATA) ? 32'(cur_tag) : cur_credit;
    always_comb begin
        case (state)
            HEAD:    m_data = W'({header_top, cur_len, 8'(cur_seq), 5'd0, cur_last, cur_type});
            BODY:    m_data = replay_word;
            default: m_data = W'(crc_sum);
        endcase
    end
    assign m_valid = (state != IDLE);
    assign m_last  = (state == TAIL);
    wire logic moved = m_valid && m_ready;
    wire logic boundary = (state == IDLE) || (state == TAIL && m_ready);

    fpdeep_crc32 #(.W(W)) u_crc (.crc_in(crc), .data(m_data), .crc_out(crc_next));

    wire logic [FW-1:0] start_slot = start_seq[FW-1:0];

    // The replay buffer (payload offset mod RD) in block RAM, read a cycle ahead so that it
    // always shows the word at cur_addr. A frame is read only once whole, so every word it
    // reads was written at least a cycle before.
    always_comb begin
        addr_next = cur_addr;
        if (moved && state == BODY) addr_next = cur_addr + 1'b1;
        if (boundary && !control_due && data_ready) addr_next = slot_start[start_slot][RW-1:0];
    end
    fpdeep_sdp_ram #(.WIDTH(W), .DEPTH(RD), .RAM_STYLE("block")) u_replay (
        .clk, .wr_en(take), .wr_addr(wr_off[RW-1:0]), .wr_data(s_data),
        .rd_en(1'b1), .rd_addr(addr_next), .rd_data(replay_word));
    wire logic has_work = s_valid || ing_len != '0 || ing_seq != acked_seq;

    always_ff @(posedge clk) begin
        if (take) begin
            if (close) begin
                slot_start[ing_seq[FW-1:0]] <= ing_start;
                slot_len[ing_seq[FW-1:0]]   <= ing_len + 1'b1;
                slot_tag[ing_seq[FW-1:0]]   <= (ing_len == '0) ? s_tag : ing_tag;
                slot_last[ing_seq[FW-1:0]]  <= s_last;
            end
        end
        if (rst) begin
            ing_seq <= '0;
            ing_len <= '0;
            ing_start <= '0;
            wr_off <= '0;
            ing_tag <= '0;
            acked_seq <= '0;
            high_seq <= '0;
            send_seq <= '0;
            acked_off <= '0;
            credit_limit <= '0;
            sent_credit <= '0;
            go_back <= 1'b0;
            ack_pending <= 1'b0;
            nak_pending <= 1'b0;
            since_ack <= '0;
            quiet <= '0;
            since_control <= '0;
            state <= IDLE;
            cur_type <= DATA;
            cur_seq <= '0;
            cur_len <= '0;
            cur_sent <= '0;
            cur_addr <= '0;
            cur_tag <= '0;
            cur_last <= 1'b0;
            cur_credit <= '0;
            crc <= '1;
            frames <= '0;
            replays <= '0;
            timeouts <= '0;
            credit_stalls <= '0;
            stuck <= 1'b0;
        end else begin
            // gathering
            if (take) begin
                wr_off <= wr_off + 1'b1;
                if (ing_len == '0) ing_tag <= s_tag;
                if (close) begin
                    ing_seq   <= ing_seq + 1'b1;
                    ing_len   <= '0;
                    ing_start <= wr_off + 1'b1;
                end else begin
                    ing_len <= ing_len + 1'b1;
                end
            end
            if (s_valid && !window_full && !buffer_full && !has_credit)
                credit_stalls <= credit_stalls + 1'b1;

            // the peer's word: cumulative ACK, credit, NAK; no ACK in time also replays
            if (ack_moves) begin
                acked_seq <= peer_seq;
                acked_off <= ack_off;
            end
            if (credit_moves) credit_limit <= peer_credit;
            if (ack_moves || in_flight == '0) since_ack <= '0;
            else if (timed_out) since_ack <= '0;
            else since_ack <= since_ack + 1'b1;
            if (timed_out) timeouts <= timeouts + 1'b1;

            // the stuck-link watchdog
            if (!has_work || ack_moves || credit_moves) quiet <= '0;
            else if (quiet >= cfg_stuck) stuck <= 1'b1;
            else quiet <= quiet + 1'b1;

            // sending
            if (adv_ack) ack_pending <= 1'b1;
            if (adv_nak) nak_pending <= 1'b1;
            since_control <= since_control + 1'b1;
            cur_addr <= addr_next;
            if (moved) begin
                crc <= crc_next;
                case (state)
                    HEAD: state <= (cur_len == '0) ? TAIL : BODY;
                    BODY: begin
                        cur_sent <= cur_sent + 1'b1;
                        if (cur_sent + 1'b1 == cur_len) state <= TAIL;
                    end
                    default: state <= IDLE;
                endcase
            end
            if (boundary) begin
                crc      <= '1;
                cur_sent <= '0;
                if (control_due) begin
                    state         <= HEAD;
                    cur_type      <= nak_pending ? NAK : ack_pending ? ACK : CREDIT;
                    cur_seq       <= adv_seq;
                    cur_len       <= '0;
                    cur_last      <= 1'b0;
                    cur_credit    <= adv_credit;
                    sent_credit   <= adv_credit;
                    since_control <= '0;
                    ack_pending   <= adv_ack;
                    nak_pending   <= adv_nak;
                end else if (data_ready) begin
                    state    <= HEAD;
                    cur_type <= DATA;
                    cur_seq  <= start_seq;
                    cur_len  <= slot_len[start_slot];
                    cur_tag  <= slot_tag[start_slot];
                    cur_last <= slot_last[start_slot];
                    send_seq <= start_seq + 1'b1;
                    go_back  <= 1'b0;
                    frames   <= frames + 1'b1;
                    if (is_replay) replays <= replays + 1'b1;
                    else high_seq <= start_seq + 1'b1;
                    // a replay restarts the wait for its ACK
                    if (go_back) since_ack <= '0;
                end
            end
            // after the frame choice, so that a request arriving as a replay starts is kept
            if (nak_now || timed_out) go_back <= 1'b1;
        end
    end
endmodule

`default_nettype wire
