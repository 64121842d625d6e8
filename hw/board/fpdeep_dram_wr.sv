// Takes `len` words from a stream into off-chip memory behind an AXI4 write channel, as
// fpdeep_mover_wr does into the store: with `parts` > 0 each word arrives as parts+1 beats of
// PW bits, low part first, joined before it is written; `err_last` flags a last beat that does
// not close the command's final word. Word k's low 2^`slot` bytes (the word sign-extended
// where the slot is wider) go to byte `addr` + k*2^`slot`, little-endian, with byte strobes on
// exactly those bytes, so a command may start and end inside a beat and the bytes around it
// survive.
// Writes are INCR bursts of whole DW-bit beats, beat-aligned, at most BURST beats, never across
// a 4 KB boundary. A burst's W beats are all buffered (2*BURST beats) before its AW is asked
// for, so once the port grants the write channel they follow every cycle and no other client
// waits on this stream. `busy` stays high until every burst's B response is back: a reader
// that starts after it sees the data. `err` remembers a B response that was not OKAY.
`default_nettype none

module fpdeep_dram_wr #(
    parameter int WIDTH = 48,
    parameter int LW = 24,
    parameter int PW = 16,
    parameter int DW = 64,       // AXI data bits: a power of two, 64 to 1024
    parameter int AWD = 64,      // AXI address bits
    parameter int BURST = 16     // most beats a burst: a power of two up to 256
) (
    input  wire logic             clk,
    input  wire logic             rst,
    // command: taken when cmd_valid (the mover must be idle)
    input  wire logic             cmd_valid,
    input  wire logic [AWD-1:0]   cmd_addr,    // byte address of the first word
    input  wire logic [1:0]       cmd_slot,    // bytes a word occupies: 2^slot
    input  wire logic [LW-1:0]    cmd_len,
    input  wire logic [1:0]       cmd_parts,   // beats per word minus one
    output logic                  busy,
    output logic                  err_last,
    output logic                  err,
    // AXI4 write address, data and response (the port adds the ID, size and burst type)
    output logic                  aw_valid,
    input  wire logic             aw_ready,
    output logic      [AWD-1:0]   aw_addr,
    output logic      [7:0]       aw_len,
    output logic                  w_valid,
    input  wire logic             w_ready,
    output logic      [DW-1:0]    w_data,
    output logic      [DW/8-1:0]  w_strb,
    output logic                  w_last,
    input  wire logic             b_valid,
    output logic                  b_ready,
    input  wire logic [1:0]       b_resp,
    // the stream
    input  wire logic [WIDTH-1:0] s_data,
    input  wire logic             s_last,
    input  wire logic             s_valid,
    output logic                  s_ready,
    output logic                  moved
);
    localparam int SB = DW / 8;                  // bytes a beat
    localparam int BB = $clog2(SB);              // address bits within a beat
    localparam int FD = 2 * BURST;               // W beat buffer
    localparam int AD = 4;                       // bursts waiting for their AW
    localparam int CW = LW + 4;                  // beats of a command

    logic [LW-1:0] left;          // words still to take
    logic [1:0]    parts, part, slot;
    logic [WIDTH-1:0] joined;
    logic [BB-1:0] off;           // the next word's slot in the beat being filled
    logic [DW-1:0] bd;            // that beat
    logic [DW/8-1:0] bs;          // and its strobes
    logic [AWD-1:0] p_addr;       // its address
    logic [CW-1:0] p_beats;       // beats of the command from it on
    logic [8:0]    p_bleft;       // beats of its burst from it on (0: it starts a burst)
    logic [AWD-1:0] b_addr;       // the current burst's address
    logic [7:0]    b_len;         // and its AXI length
    logic [15:0]   pending;       // bursts buffered or written whose response is not back
    logic          w_space, a_space;

    assign s_ready = (left != '0) && w_space && a_space;
    assign moved = s_valid && s_ready;
    assign b_ready = 1'b1;

    wire logic final_part = (part == parts);
    // a part is its low PW bits (a sign-extended beat keeps its sign only as a whole word)
    wire logic [WIDTH-1:0] shifted = WIDTH'(s_data[PW-1:0]) << (PW * int'(part));
    wire logic [WIDTH-1:0] word = (parts == 2'd0) ? s_data : (joined | shifted);
    wire logic done_word = moved && final_part;
    // the beat's last slot, or the command's last word
    wire logic beat_end = (off == BB'((DW / 8 - 1) >> slot)) || (left == LW'(1));

    // the word in its slot of the beat, and the slot's byte strobes
    logic [DW-1:0]   placed;
    logic [DW/8-1:0] strobes;
    always_comb begin
        logic [63:0] wide;
        logic [BB-1:0] byte_off;
        wide = 64'($signed(word));
        case (slot)
            2'd0: begin wide = {56'd0, wide[7:0]}; strobes = SB'(8'h01); end
            2'd1: begin wide = {48'd0, wide[15:0]}; strobes = SB'(8'h03); end
            2'd2: begin wide = {32'd0, wide[31:0]}; strobes = SB'(8'h0f); end
            default: strobes = SB'(8'hff);
        endcase
        byte_off = off << slot;
        placed = DW'(wide) << {byte_off, 3'b000};
        strobes = strobes << byte_off;
    end

    // the beats that cover `len` words of 2^slot bytes from an address with low bits `lo` on
    function automatic logic [CW-1:0] beats_of(input logic [BB-1:0] lo, input logic [1:0] s,
                                               input logic [LW-1:0] len);
        logic [CW-1:0] bytes;
        bytes = (CW'(len) << s) + CW'(lo) + CW'({BB{1'b1}});
        beats_of = (len == '0) ? '0 : bytes >> BB;
    endfunction

    // a burst starting at the current beat: as long as allowed
    logic [31:0] blen;
    always_comb begin
        logic [31:0] to4k;
        to4k = 32'((4096 >> BB) - int'(p_addr[11:BB]));
        blen = (p_beats < CW'(BURST)) ? 32'(p_beats) : 32'(BURST);  // p_beats may pass 32 bits
        if (to4k < blen) blen = to4k;
    end

    wire logic [7:0] new_len = 8'(blen - 1);  // a burst's AXI length, as it starts
    wire logic push = done_word && beat_end;
    wire logic starts = (p_bleft == '0);
    wire logic closes = starts ? (blen == 32'd1) : (p_bleft == 9'd1);

    always_ff @(posedge clk) begin
        if (rst) begin
            left <= '0;
            part <= '0;
            err_last <= 1'b0;
        end else begin
            if (cmd_valid) begin
                left <= cmd_len;
                parts <= cmd_parts;
                slot <= cmd_slot;
                part <= '0;
                joined <= '0;
                err_last <= 1'b0;
                off <= BB'(cmd_addr[BB-1:0] >> cmd_slot);
                bd <= '0;
                bs <= '0;
                p_addr <= {cmd_addr[AWD-1:BB], BB'(0)};
                p_beats <= beats_of(cmd_addr[BB-1:0], cmd_slot, cmd_len);
                p_bleft <= '0;
            end else if (moved) begin
                if (final_part) begin
                    left <= left - 1'b1;
                    part <= '0;
                    joined <= '0;
                    if (s_last != (left == LW'(1))) err_last <= 1'b1;
                    if (beat_end) begin
                        off <= '0;
                        bd <= '0;
                        bs <= '0;
                        p_addr <= p_addr + AWD'(DW / 8);
                        p_beats <= p_beats - 1'b1;
                        if (starts) begin
                            b_addr <= p_addr;
                            b_len <= new_len;
                            p_bleft <= 9'(blen - 1);
                        end else begin
                            p_bleft <= p_bleft - 1'b1;
                        end
                    end else begin
                        off <= off + 1'b1;
                        bd <= bd | placed;
                        bs <= bs | strobes;
                    end
                end else begin
                    joined <= joined | shifted;
                    part <= part + 1'b1;
                end
            end
        end
    end

    // the W beats, and the bursts whose beats are all in
    logic f_unused_a;
    logic [$clog2(FD+1)-1:0] w_count;
    logic [$clog2(AD+1)-1:0] a_count;
    wire logic unused = f_unused_a || (|w_count) || (|a_count);

    fpdeep_stream_fifo #(.WIDTH(DW + DW / 8), .DEPTH(FD)) u_w (
        .clk, .rst,
        .s_data({bs | strobes, bd | placed}), .s_last(closes), .s_valid(push),
        .s_ready(w_space),
        .m_data({w_strb, w_data}), .m_last(w_last), .m_valid(w_valid), .m_ready(w_ready),
        .count(w_count)
    );

    fpdeep_stream_fifo #(.WIDTH(AWD + 8), .DEPTH(AD)) u_aw (
        .clk, .rst,
        .s_data(starts ? {p_addr, new_len} : {b_addr, b_len}), .s_last(1'b0),
        .s_valid(push && closes), .s_ready(a_space),
        .m_data({aw_addr, aw_len}), .m_last(f_unused_a), .m_valid(aw_valid), .m_ready(aw_ready),
        .count(a_count)
    );

    always_ff @(posedge clk) begin
        if (rst) begin
            pending <= '0;
            err <= 1'b0;
        end else begin
            pending <= pending + 16'(push && closes) - 16'(b_valid);
            if (b_valid && b_resp != 2'b00) err <= 1'b1;
        end
    end

    assign busy = (left != '0) || (pending != '0);
endmodule

`default_nettype wire
