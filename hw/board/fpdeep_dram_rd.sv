// Reads `len` words of a tensor kept in off-chip memory, behind an AXI4 read channel, and
// streams them out as fpdeep_mover_rd does from the store: each word as `parts`+1 beats of PW
// bits, low part first, `last` on the final beat, and a command with `chain` set going on
// into the next one (which may come while it runs; one waits) as one stream. Words are packed
// densely in memory, little-endian, 2^`slot` bytes each from byte `addr` on (a multiple of the
// slot), and are sign-extended from their slot's bits to WIDTH.
// Reads are INCR bursts of whole DW-bit beats, beat-aligned, at most BURST beats, never across
// a 4 KB boundary; words before `addr` in the first beat and after the last word are dropped.
// A burst is asked for only when the beat buffer (2*BURST beats) has room for all of it, so
// `r_ready` stays high and the port shared with other clients is never held up by this one;
// with two bursts in flight a memory that answers a beat a cycle keeps the stream at a word a
// cycle. `err` remembers an R beat whose response was not OKAY until reset.
`default_nettype none

module fpdeep_dram_rd #(
    parameter int WIDTH = 48,
    parameter int LW = 24,
    parameter int PW = 16,
    parameter int DW = 64,       // AXI data bits: a power of two, 64 to 1024
    parameter int AWD = 64,      // AXI address bits
    parameter int BURST = 16     // most beats a burst: a power of two up to 256
) (
    input  wire logic             clk,
    input  wire logic             rst,
    // command: taken when cmd_valid (idle, or the continuation of a chained command)
    input  wire logic             cmd_valid,
    input  wire logic [AWD-1:0]   cmd_addr,    // byte address of the first word
    input  wire logic [1:0]       cmd_slot,    // bytes a word occupies: 2^slot
    input  wire logic [LW-1:0]    cmd_len,
    input  wire logic [1:0]       cmd_parts,   // beats per word minus one
    input  wire logic             cmd_chain,   // the next command continues the stream
    output logic                  busy,
    output logic                  err,
    // AXI4 read address and data (the port adds the ID, size and burst type)
    output logic                  ar_valid,
    input  wire logic             ar_ready,
    output logic      [AWD-1:0]   ar_addr,
    output logic      [7:0]       ar_len,
    input  wire logic             r_valid,
    output logic                  r_ready,
    input  wire logic [DW-1:0]    r_data,
    input  wire logic [1:0]       r_resp,
    input  wire logic             r_last,
    // the stream
    output logic      [WIDTH-1:0] m_data,
    output logic                  m_last,
    output logic                  m_valid,
    input  wire logic             m_ready,
    output logic                  moved        // a beat left this cycle
);
    localparam int BB = $clog2(DW / 8);          // address bits within a beat
    localparam int FD = 2 * BURST;               // beat buffer
    localparam int FC = $clog2(FD + 1);
    localparam int CW = LW + 4;                  // beats of a command

    // ---- the command waiting behind a chained one -----------------------------------------
    logic           nx_valid, nx_chain;
    logic [AWD-1:0] nx_addr;
    logic [1:0]     nx_slot;
    logic [LW-1:0]  nx_len;
    logic           nx_asked;    // the address side has taken it already

    // beats that cover `len` words of 2^slot bytes from `addr` on
    function automatic logic [CW-1:0] beats_of(input logic [BB-1:0] lo, input logic [1:0] slot,
                                               input logic [LW-1:0] len);
        logic [CW-1:0] bytes;
        bytes = (CW'(len) << slot) + CW'(lo) + CW'({BB{1'b1}});
        beats_of = (len == '0) ? '0 : bytes >> BB;
    endfunction

    // ---- address side: bursts as long as allowed, while the buffer has room ----------------
    logic [AWD-1:0] a_addr;      // the next burst's beat-aligned address
    logic [CW-1:0]  a_beats;     // beats still to ask for
    logic [FC-1:0]  credits;     // buffer beats not yet promised to a burst
    logic [31:0]    blen;
    logic           f_pop;

    always_comb begin
        logic [31:0] to4k;
        to4k = 32'((4096 >> BB) - int'(a_addr[11:BB]));
        blen = (a_beats < CW'(BURST)) ? 32'(a_beats) : 32'(BURST);  // a_beats may pass 32 bits
        if (to4k < blen) blen = to4k;
    end

    wire logic ask = (a_beats != '0) && (32'(credits) >= blen) && (!ar_valid || ar_ready);
    wire logic a_spent = (a_beats == '0) || (ask && a_beats == CW'(blen));
    wire logic take_cmd = cmd_valid && !busy;
    wire logic a_next = nx_valid && !nx_asked && a_spent && !take_cmd;

    always_ff @(posedge clk) begin
        if (rst) begin
            a_beats <= '0;
            ar_valid <= 1'b0;
            credits <= FC'(FD);
        end else begin
            if (ar_ready) ar_valid <= 1'b0;
            if (ask) begin
                ar_valid <= 1'b1;
                ar_addr <= a_addr;
                ar_len <= 8'(blen - 1);
                a_addr <= a_addr + (AWD'(blen) << BB);
                a_beats <= a_beats - CW'(blen);
            end
            if (take_cmd) begin
                a_addr <= {cmd_addr[AWD-1:BB], BB'(0)};
                a_beats <= beats_of(cmd_addr[BB-1:0], cmd_slot, cmd_len);
            end else if (a_next) begin
                a_addr <= {nx_addr[AWD-1:BB], BB'(0)};
                a_beats <= beats_of(nx_addr[BB-1:0], nx_slot, nx_len);
            end
            credits <= credits - (ask ? FC'(blen) : '0) + FC'(f_pop);
        end
    end

    // ---- the beat buffer: never full when a beat comes, as every burst was given room -----
    logic [DW-1:0] f_data;
    logic          f_valid, f_space, f_unused_last;
    logic [FC-1:0] f_count;
    logic [63:0]   slots;        // the next word's slot and those above it (WIDTH may be fewer)
    wire logic unused = f_space || f_unused_last || r_last || (|f_count) || (|slots);

    assign r_ready = 1'b1;

    fpdeep_stream_fifo #(.WIDTH(DW), .DEPTH(FD)) u_beats (
        .clk, .rst,
        .s_data(r_data), .s_last(1'b0), .s_valid(r_valid), .s_ready(f_space),
        .m_data(f_data), .m_last(f_unused_last), .m_valid(f_valid), .m_ready(f_pop),
        .count(f_count)
    );

    always_ff @(posedge clk) begin
        if (rst) err <= 1'b0;
        else if (r_valid && r_resp != 2'b00) err <= 1'b1;
    end

    // ---- word side: the words of each beat, one a cycle, into the output register ----------
    logic [LW-1:0] u_left;       // words of the current command still to take
    logic [BB-1:0] u_off;        // its next word's slot in the buffer's first beat
    logic [1:0]    u_slot, u_parts;
    logic          u_chain;
    logic [WIDTH-1:0] w_data;    // the word going out
    logic          w_valid, w_last;
    logic [1:0]    w_parts, part;

    wire logic final_part = (part == w_parts);
    wire logic w_free = !w_valid || (m_ready && final_part);
    wire logic u_take = (u_left != '0) && f_valid && w_free;
    wire logic u_spent = (u_left == '0) || (u_left == LW'(1) && u_take);
    // the beat's last slot, or the command's last word
    wire logic beat_end = (u_off == BB'((DW / 8 - 1) >> u_slot)) || (u_left == LW'(1));
    assign f_pop = u_take && beat_end;
    wire logic u_next = nx_valid && u_spent && (nx_asked || a_next) && !take_cmd;

    logic [WIDTH-1:0] word;
    always_comb begin
        slots = 64'(f_data >> {u_off << u_slot, 3'b000});
        case (u_slot)
            2'd0: word = WIDTH'($signed(slots[7:0]));
            2'd1: word = WIDTH'($signed(slots[15:0]));
            2'd2: word = WIDTH'($signed(slots[31:0]));
            default: word = WIDTH'($signed(slots));
        endcase
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            u_left <= '0;
            nx_valid <= 1'b0;
            w_valid <= 1'b0;
            part <= '0;
        end else begin
            if (u_take) begin
                u_left <= u_left - 1'b1;
                u_off <= beat_end ? '0 : u_off + 1'b1;
            end
            if (take_cmd) begin
                u_left <= cmd_len;
                u_off <= BB'(cmd_addr[BB-1:0] >> cmd_slot);
                u_slot <= cmd_slot;
                u_parts <= cmd_parts;
                u_chain <= cmd_chain;
            end else if (cmd_valid) begin
                nx_valid <= 1'b1;
                nx_asked <= 1'b0;
                nx_addr <= cmd_addr;
                nx_slot <= cmd_slot;
                nx_len <= cmd_len;
                nx_chain <= cmd_chain;
            end else begin
                if (a_next) nx_asked <= 1'b1;
                if (u_next) begin
                    nx_valid <= 1'b0;
                    u_left <= nx_len;
                    u_off <= BB'(nx_addr[BB-1:0] >> nx_slot);
                    u_slot <= nx_slot;
                    u_chain <= nx_chain;
                end
            end
            if (w_free) w_valid <= u_take;
            if (u_take) begin
                w_data <= word;
                w_last <= (u_left == LW'(1)) && !u_chain;
                w_parts <= u_parts;
            end
            if (moved) part <= final_part ? '0 : part + 1'b1;
        end
    end

    assign m_valid = w_valid;
    assign m_data = w_data >> (PW * int'(part));
    assign m_last = w_last && final_part;
    assign moved = m_valid && m_ready;

    assign busy = (u_left != '0) || nx_valid || w_valid;
endmodule

`default_nettype wire
