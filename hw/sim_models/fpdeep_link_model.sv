// fpdeep link model, SIMULATION ONLY: stands for the transceivers and cable between two
// boards in the cluster simulation top. A word accepted in cycle t leaves no earlier than
// cycle t + cfg_latency, and at most cfg_num words are accepted per cfg_den cycles (a token
// bucket, so the link's bandwidth relative to the fabric clock is cfg_num / cfg_den).
// DEPTH must cover latency x bandwidth, or the model throttles below the configured rate.
`default_nettype none

module fpdeep_link_model #(
    parameter int W     = 18,
    parameter int DEPTH = 256,
    parameter int CW    = 16
) (
    input  wire logic          clk,
    input  wire logic          rst,
    input  wire logic [CW-1:0] cfg_latency,
    input  wire logic [CW-1:0] cfg_num,
    input  wire logic [CW-1:0] cfg_den,
    input  wire logic [W-1:0]  s_data,
    input  wire logic          s_valid,
    output logic               s_ready,
    output logic [W-1:0]       m_data,
    output logic               m_valid,
    input  wire logic          m_ready
);
    localparam int PW = $clog2(DEPTH);
    logic [W-1:0]  q_data [DEPTH];
    logic [31:0]   q_time [DEPTH];
    logic [PW:0]   count;
    logic [PW-1:0] wr, rd;
    logic [31:0]   now;
    logic [CW:0]   tokens;

    wire logic has_token = (tokens >= (CW+1)'(cfg_den));
    assign s_ready = has_token && (count != (PW+1)'(DEPTH));
    assign m_valid = (count != '0) && (now - q_time[rd] >= 32'(cfg_latency));
    assign m_data  = q_data[rd];
    wire logic push = s_valid && s_ready;
    wire logic pop  = m_valid && m_ready;

    always_ff @(posedge clk) begin
        if (push) begin
            q_data[wr] <= s_data;
            q_time[wr] <= now;
        end
        if (rst) begin
            count  <= '0;
            wr     <= '0;
            rd     <= '0;
            now    <= '0;
            tokens <= '0;
        end else begin
            now <= now + 1;
            // earn cfg_num tokens a cycle, spend cfg_den per word; never bank more than a word
            // and a cycle's worth, so the rate holds over any window, bursts included
            if (push) tokens <= tokens - (CW+1)'(cfg_den) + (CW+1)'(cfg_num);
            else if (!has_token) tokens <= tokens + (CW+1)'(cfg_num);
            if (push) wr <= wr + 1'b1;
            if (pop)  rd <= rd + 1'b1;
            count <= count + (PW+1)'(push) - (PW+1)'(pop);
        end
    end
endmodule

`default_nettype wire
