// The board's host interface: packets on the host AXI4-Stream pair (64-bit beats). A packet
// is a header beat, [63:56] opcode, [55:48] target, [47:24] address, [23:0] length, and for
// writes `length` payload beats; tlast closes it. Opcodes (fpdeep.hwlib.protocol.HOST_OPCODES):
//   WRITE   store bank `target`, words from `address` on (payload: a word per beat, low bits)
//   READ    answered with a status beat, then `length` words, tlast on the last
//   PROGRAM resource `target`'s instruction memory from `address` on
//   MEMORY  (DRAM = 1 only) one payload beat: the byte address in off-chip memory of the next
//           WRITE or READ of bank 255, each word 2^`target` bytes there; those go through the
//           mem_* command and streams to the board's off-chip memory movers
// Every packet is answered with a status beat [63:56] 0x80|opcode, [55:48] error code,
// [23:0] length (for READ it heads the data). A bad packet (unknown opcode, a length that the
// payload or the target's size contradicts, an unknown bank or resource) is consumed up to
// its tlast, answered with its error code and reported on `fault`; nothing is written to an
// unknown target, and a payload cut short keeps the words that came but does not count as
// loaded (`written`, `programmed`); off chip, the missing words are written as 0, as the
// memory mover was told the packet's length.
`default_nettype none

module fpdeep_host #(
    parameter int NB = 1,
    parameter int NRES = 1,
    parameter int PD = 64,          // the deepest instruction memory (prog_addr's range)
    parameter int WIDTH = 48,
    parameter int BW = 8,
    parameter int AW = 20,
    parameter int LW = 24,
    parameter logic [NB*32-1:0] DEPTHS = {NB{32'd1024}},
    parameter logic [NRES*32-1:0] PDS = {NRES{32'd64}},  // each resource's instruction words
    parameter bit DRAM = 1'b0       // the board has off-chip memory (bank 255)
) (
    input  wire logic             clk,
    input  wire logic             rst,
    input  wire logic [63:0]      s_axis_tdata,
    input  wire logic             s_axis_tvalid,
    output logic                  s_axis_tready,
    input  wire logic             s_axis_tlast,
    output logic      [63:0]      m_axis_tdata,
    output logic                  m_axis_tvalid,
    input  wire logic             m_axis_tready,
    output logic                  m_axis_tlast,
    // store clients
    output logic                  wr_req,
    output logic      [BW-1:0]    wr_bank,
    output logic      [AW-1:0]    wr_addr,
    output logic      [WIDTH-1:0] wr_data,
    input  wire logic             wr_gnt,
    output logic                  rd_req,
    output logic      [BW-1:0]    rd_bank,
    output logic      [AW-1:0]    rd_addr,
    input  wire logic             rd_gnt,
    input  wire logic             rd_valid,
    input  wire logic [WIDTH-1:0] rd_data,
    // off-chip memory: a command to the memory movers and their streams
    output logic                  mem_rd_cmd,
    output logic                  mem_wr_cmd,
    output logic      [47:0]      mem_addr,
    output logic      [1:0]       mem_slot,
    output logic      [LW-1:0]    mem_len,
    input  wire logic             mem_wr_busy,
    input  wire logic [WIDTH-1:0] mem_rd_data,
    input  wire logic             mem_rd_last,
    input  wire logic             mem_rd_valid,
    output logic                  mem_rd_ready,
    output logic      [WIDTH-1:0] mem_wr_data,
    output logic                  mem_wr_last,
    output logic                  mem_wr_valid,
    input  wire logic             mem_wr_ready,
    // instruction memories
    output logic                  prog_we,
    output logic      [7:0]       prog_res,
    output logic      [$clog2(PD)-1:0] prog_addr,
    output logic      [63:0]      prog_data,
    // what has been loaded, for the start check
    output logic      [NB-1:0]    written,
    output logic      [NRES-1:0]  programmed,
    output logic                  fault,
    output logic      [7:0]       fault_code
);
    localparam logic [7:0] OP_WRITE = 8'h01, OP_READ = 8'h02, OP_PROGRAM = 8'h03,
                           OP_MEMORY = 8'h04, DRAM_BANK = 8'hFF;
    // error codes (fpdeep.hwlib.protocol.ERRORS)
    localparam logic [7:0] E_OK = 8'd0, E_OPCODE = 8'd1, E_LENGTH = 8'd2, E_TARGET = 8'd3;
    typedef enum logic [2:0] {IDLE, PAYLOAD, DRAIN, RESPOND, READ_HEAD, READ_DATA, FILL}
        state_t;

    state_t state;
    logic [7:0] op, target, code;
    logic [LW-1:0] len, count;
    logic full;  // a store word waits for its write grant

    wire logic [7:0]  h_op = s_axis_tdata[63:56];
    wire logic [7:0]  h_target = s_axis_tdata[55:48];
    wire logic [23:0] h_addr = s_axis_tdata[47:24];
    wire logic [23:0] h_len = s_axis_tdata[23:0];
    wire logic [32:0] h_end = 33'(h_addr) + 33'(h_len);

    // does [address, address + length) lie inside the target? (off chip: the memory answers)
    logic bank_ok, prog_ok;
    wire logic h_dram = DRAM && h_target == DRAM_BANK;
    logic off_chip;  // the packet's target is off-chip memory
    always_comb begin
        bank_ok = h_dram;
        for (int b = 0; b < NB; b++)
            if (32'(h_target) == b && h_end <= 33'(DEPTHS[b*32 +: 32])) bank_ok = 1'b1;
        prog_ok = 1'b0;
        for (int r = 0; r < NRES; r++)
            if (32'(h_target) == r && h_end <= 33'(PDS[r*32 +: 32])) prog_ok = 1'b1;
    end

    wire logic beat = s_axis_tvalid && s_axis_tready;

    // off chip: a WRITE's words stream to the memory writer, a READ's come from the reader
    wire logic take_words = state == IDLE && beat && h_dram && h_len != '0 && bank_ok;
    assign mem_wr_cmd = take_words && h_op == OP_WRITE && !s_axis_tlast;
    assign mem_rd_cmd = take_words && h_op == OP_READ && s_axis_tlast;
    assign mem_len = LW'(h_len);
    assign mem_wr_data = (state == FILL) ? '0 : s_axis_tdata[WIDTH-1:0];
    assign mem_wr_valid = off_chip && ((state == PAYLOAD && s_axis_tvalid) || state == FILL);
    assign mem_wr_last = (count == len - 1'b1);
    assign mem_rd_ready = off_chip && (state == READ_DATA) && m_axis_tready;

    // READ: the words come through a read mover
    logic rd_busy, r_valid, r_last, r_ready, r_moved;
    wire logic unused = &{1'b0, rd_busy, r_moved};
    logic [WIDTH-1:0] r_data;
    fpdeep_mover_rd #(.WIDTH(WIDTH), .BW(BW), .AW(AW), .LW(LW)) u_reader (
        .clk, .rst,
        .cmd_valid(state == IDLE && beat && h_op == OP_READ && bank_ok && !h_dram
                   && s_axis_tlast && h_len != '0),
        .cmd_bank(BW'(h_target)), .cmd_addr(AW'(h_addr)), .cmd_len(LW'(h_len)),
        .cmd_hold(1'b0), .cmd_parts(2'd0), .cmd_chain(1'b0), .busy(rd_busy),
        .rd_req, .rd_bank, .rd_addr, .rd_gnt, .rd_valid, .rd_data,
        .m_data(r_data), .m_last(r_last), .m_valid(r_valid), .m_ready(r_ready), .moved(r_moved)
    );
    assign r_ready = !off_chip && (state == READ_DATA) && m_axis_tready;

    always_comb begin
        s_axis_tready = 1'b0;
        case (state)
            IDLE: s_axis_tready = 1'b1;
            PAYLOAD: s_axis_tready = off_chip ? mem_wr_ready
                                     : (op != OP_WRITE) || !full || wr_gnt;
            DRAIN: s_axis_tready = 1'b1;
            default: s_axis_tready = 1'b0;
        endcase
    end

    always_comb begin
        m_axis_tvalid = 1'b0;
        m_axis_tlast = 1'b0;
        m_axis_tdata = {8'h80 | op, code, 24'(0), 24'(len)};
        case (state)
            RESPOND: begin  // once the packet's last word is in the store (or memory)
                m_axis_tvalid = !full && !mem_wr_busy;
                m_axis_tlast = 1'b1;
            end
            READ_HEAD: m_axis_tvalid = 1'b1;
            READ_DATA: begin
                m_axis_tvalid = off_chip ? mem_rd_valid : r_valid;
                m_axis_tlast = off_chip ? mem_rd_last : r_last;
                m_axis_tdata = 64'($signed(off_chip ? mem_rd_data : r_data));
            end
            default: ;
        endcase
    end

    assign wr_req = full;

    always_ff @(posedge clk) begin
        fault <= 1'b0;
        prog_we <= 1'b0;
        if (rst) begin
            state <= IDLE;
            full <= 1'b0;
            written <= '0;
            programmed <= '0;
            fault_code <= E_OK;
        end else begin
            if (wr_gnt) begin
                full <= 1'b0;
                wr_addr <= wr_addr + 1'b1;
            end
            case (state)
                IDLE: if (beat) begin
                    op <= h_op;
                    target <= h_target;
                    len <= h_len;
                    count <= '0;
                    code <= E_OK;
                    state <= RESPOND;
                    off_chip <= h_dram && (h_op == OP_WRITE || h_op == OP_READ);
                    if (h_op == OP_MEMORY && DRAM) begin
                        if (s_axis_tlast || h_len != 24'd1) begin
                            code <= E_LENGTH;
                            if (!s_axis_tlast) state <= DRAIN;
                        end else begin
                            state <= PAYLOAD;
                            mem_slot <= h_target[1:0];
                        end
                    end else if (h_op == OP_WRITE || h_op == OP_PROGRAM) begin
                        if (!(h_op == OP_WRITE ? bank_ok : prog_ok)) begin
                            code <= E_TARGET;
                            if (!s_axis_tlast) state <= DRAIN;
                        end else if (s_axis_tlast != (h_len == '0)) begin
                            code <= E_LENGTH;
                            if (!s_axis_tlast) state <= DRAIN;
                        end else if (h_len != '0) begin
                            state <= PAYLOAD;
                        end
                        wr_bank <= BW'(h_target);
                        wr_addr <= AW'(h_addr);
                        prog_addr <= $clog2(PD)'(h_addr);
                        prog_res <= h_target;
                    end else if (h_op == OP_READ) begin
                        if (!s_axis_tlast) begin
                            code <= E_LENGTH;
                            state <= DRAIN;
                        end else if (!bank_ok) code <= E_TARGET;
                        else if (h_len != '0) state <= READ_HEAD;
                    end else begin
                        code <= E_OPCODE;
                        if (!s_axis_tlast) state <= DRAIN;
                    end
                end
                PAYLOAD: if (beat) begin
                    // off chip, the word went to the memory writer
                    if (op == OP_MEMORY) begin
                        mem_addr <= s_axis_tdata[47:0];
                    end else if (op == OP_WRITE && !off_chip) begin
                        wr_data <= s_axis_tdata[WIDTH-1:0];
                        full <= 1'b1;
                    end else if (op == OP_PROGRAM) begin
                        prog_we <= 1'b1;
                        prog_data <= s_axis_tdata;
                    end
                    count <= count + 1'b1;
                    if (s_axis_tlast != (count == len - 1'b1)) begin
                        code <= E_LENGTH;  // early tlast, or none at the stated end
                        state <= s_axis_tlast ? (off_chip ? FILL : RESPOND) : DRAIN;
                    end else if (s_axis_tlast) begin
                        state <= RESPOND;
                        // off-chip words and a MEMORY packet count as nothing loaded
                        if (op == OP_WRITE && !off_chip) begin
                            for (int b = 0; b < NB; b++)
                                if (32'(target) == b) written[b] <= 1'b1;
                        end else if (op == OP_PROGRAM) begin
                            for (int r = 0; r < NRES; r++)
                                if (32'(target) == r) programmed[r] <= 1'b1;
                        end
                    end
                end
                DRAIN: if (beat && s_axis_tlast) state <= RESPOND;
                FILL: if (mem_wr_ready) begin  // the memory writer waits for its last words
                    count <= count + 1'b1;
                    if (count == len - 1'b1) state <= RESPOND;
                end
                RESPOND: if (m_axis_tvalid && m_axis_tready) begin
                    state <= IDLE;
                    if (code != E_OK) begin
                        fault <= 1'b1;
                        fault_code <= code;
                    end
                end
                READ_HEAD: if (m_axis_tready) state <= READ_DATA;
                READ_DATA: if (m_axis_tvalid && m_axis_tready && m_axis_tlast) state <= IDLE;
                default: state <= IDLE;
            endcase
            if (prog_we) prog_addr <= prog_addr + 1'b1;
        end
    end
endmodule

`default_nettype wire
